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
  echo "[schemathesis] installing schemathesis $VERSION into $VENV" >&2
  if [[ $(id -u) -ne 0 ]] && ! python3 -c 'import ensurepip' >/dev/null 2>&1; then
    echo "[schemathesis] python3-venv is missing (apt-get install python3-venv)" >&2; return 1
  fi
  (source "$ROOT/scripts/lib.sh" && ensure_venv "$VENV") # the venv check:deploy's tools share; apt installs queued
  "$VENV/bin/pip" install -q --disable-pip-version-check "schemathesis==$VERSION"
}

case "${1:-}" in
  install) install ;;
  run) shift; install; exec "$VENV/bin/schemathesis" ${SCHEMATHESIS_CONFIG:+--config-file "$SCHEMATHESIS_CONFIG"} run "$@" ;;
  *) echo "usage: schemathesis.sh install | run <args>" >&2; exit 2 ;;
esac
