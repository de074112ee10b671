#!/usr/bin/env bash
# The official Python SDK in a virtualenv for the SDK check (test/sdk/firecrawl_py_check.py).
#   scripts/python-sdk.sh install   create .venv-sdk with firecrawl-py (idempotent; fast when present)
#   scripts/python-sdk.sh python    print the virtualenv's python
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/pip-venv.sh
# 4.52.1: the newest 4.x whose dependencies PyPI serves today (4.53+ require a certifi release not yet published)
FIRECRAWL_PY_VERSION=4.52.1
VENV=.venv-sdk
case "${1:-install}" in
  install) pip_venv_install python-sdk "$VENV" firecrawl-py "$FIRECRAWL_PY_VERSION" ;;
  python) echo "$PWD/$VENV/bin/python" ;;
  *) echo "usage: $0 install|python" >&2; exit 2 ;;
esac
