#!/usr/bin/env bash
# Webrecorder's Python warcio in a virtualenv: the independent reader that test/integration/warc.test.ts checks
# Trawl's WARC files with (`warcio check`, `warcio index`).
#   scripts/warcio.sh install   create .venv-warcio with warcio (idempotent; fast when present)
#   scripts/warcio.sh bin       print the virtualenv's warcio executable
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/pip-venv.sh
WARCIO_VERSION=1.8.1
VENV=.venv-warcio
case "${1:-install}" in
  install) pip_venv_install warcio "$VENV" warcio "$WARCIO_VERSION" ;;
  bin) echo "$PWD/$VENV/bin/warcio" ;;
  *) echo "usage: $0 install|bin" >&2; exit 2 ;;
esac
