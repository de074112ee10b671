#!/usr/bin/env bash
# Webrecorder's Python warcio in a virtualenv: the independent reader that test/integration/warc.test.ts checks
# Trawl's WARC files with (`warcio check`, `warcio index`).
#   scripts/warcio.sh install   create .venv-warcio with warcio (idempotent; fast when present)
#   scripts/warcio.sh bin       print the virtualenv's warcio executable
set -euo pipefail
cd "$(dirname "$0")/.."
WARCIO_VERSION=1.8.1
VENV=.venv-warcio
case "${1:-install}" in
  install)
    if [[ -x "$VENV/bin/warcio" ]] && "$VENV/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('warcio') != '$WARCIO_VERSION')" 2>/dev/null; then
      exit 0
    fi
    command -v python3 >/dev/null || { echo "[warcio] python3 is missing" >&2; exit 1; }
    python3 -m venv "$VENV" 2>/dev/null || { echo "[warcio] python3 -m venv failed: install python3-venv" >&2; exit 1; }
    "$VENV/bin/pip" install -q --disable-pip-version-check "warcio==$WARCIO_VERSION"
    echo "[warcio] warcio $WARCIO_VERSION in $VENV"
    ;;
  bin) echo "$PWD/$VENV/bin/warcio" ;;
  *) echo "usage: $0 install|bin" >&2; exit 2 ;;
esac
