#!/usr/bin/env bash
# Schemathesis (PyPI) in a virtualenv under .venv/, for the API fuzz test (test/integration/schemathesis.test.ts).
# usage: schemathesis.sh install   (idempotent; fast when the pinned version is there)
#        schemathesis.sh run <args>  (the CLI, after install)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
VENV="${TRAWL_VENV:-$ROOT/.venv}"
VERSION=4.32.5

install() {
  if [[ -x "$VENV/bin/schemathesis" ]] && [[ "$("$VENV/bin/schemathesis" --version 2>/dev/null)" == *"$VERSION"* ]]; then return 0; fi
  if ! python3 -m venv --help >/dev/null 2>&1 || ! python3 -c 'import ensurepip' >/dev/null 2>&1; then
    if [[ $(id -u) -eq 0 ]]; then
      (source "$ROOT/scripts/lib.sh" && apt_install python3-venv) # queued with the other installs of scripts/
    else
      echo "[schemathesis] python3-venv is missing (apt-get install python3-venv)" >&2; return 1
    fi
  fi
  echo "[schemathesis] installing schemathesis $VERSION into $VENV" >&2
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q --disable-pip-version-check "schemathesis==$VERSION"
}

case "${1:-}" in
  install) install ;;
  run) shift; install; exec "$VENV/bin/schemathesis" ${SCHEMATHESIS_CONFIG:+--config-file "$SCHEMATHESIS_CONFIG"} run "$@" ;;
  *) echo "usage: schemathesis.sh install | run <args>" >&2; exit 2 ;;
esac
