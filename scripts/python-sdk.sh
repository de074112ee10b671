#!/usr/bin/env bash
# The official Python SDK in a virtualenv for the SDK check (test/sdk/firecrawl_py_check.py).
#   scripts/python-sdk.sh install   create .venv-sdk with firecrawl-py (idempotent; fast when present)
#   scripts/python-sdk.sh python    print the virtualenv's python
set -euo pipefail
cd "$(dirname "$0")/.."
# 4.52.1: the newest 4.x whose dependencies PyPI serves today (4.53+ require a certifi release not yet published)
FIRECRAWL_PY_VERSION=4.52.1
VENV=.venv-sdk
case "${1:-install}" in
  install)
    if [[ -x "$VENV/bin/python" ]] && "$VENV/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('firecrawl-py') != '$FIRECRAWL_PY_VERSION')" 2>/dev/null; then
      exit 0
    fi
    command -v python3 >/dev/null || { echo "[python-sdk] python3 is missing" >&2; exit 1; }
    python3 -m venv "$VENV" 2>/dev/null || { echo "[python-sdk] python3 -m venv failed: install python3-venv" >&2; exit 1; }
    "$VENV/bin/pip" install -q --disable-pip-version-check "firecrawl-py==$FIRECRAWL_PY_VERSION"
    echo "[python-sdk] firecrawl-py $FIRECRAWL_PY_VERSION in $VENV"
    ;;
  python) echo "$PWD/$VENV/bin/python" ;;
  *) echo "usage: $0 install|python" >&2; exit 2 ;;
esac
