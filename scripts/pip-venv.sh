# One PyPI package at an exact version in its own virtualenv (the test tools: firecrawl-py, warcio, chdb-core). Sourced.
#   pip_venv_installed VENV PACKAGE VERSION   true when VENV has PACKAGE==VERSION
#   pip_venv_install TAG VENV PACKAGE VERSION create VENV with PACKAGE==VERSION unless it is there (idempotent; fast
#                                             when present); TAG prefixes its messages

pip_venv_installed() {
  local venv=$1 package=$2 version=$3
  [[ -x "$venv/bin/python" ]] && "$venv/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('$package') != '$version')" 2>/dev/null
}

pip_venv_install() {
  local tag=$1 venv=$2 package=$3 version=$4
  pip_venv_installed "$venv" "$package" "$version" && return 0
  command -v python3 >/dev/null || { echo "[$tag] python3 is missing" >&2; return 1; }
  python3 -m venv "$venv" 2>/dev/null || { echo "[$tag] python3 -m venv failed: install python3-venv" >&2; return 1; }
  "$venv/bin/pip" install -q --disable-pip-version-check "$package==$version"
  echo "[$tag] $package $version in $venv"
}
