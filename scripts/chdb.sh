#!/usr/bin/env bash
# Trawl's SQL on the current ClickHouse engine (issue 37): CI's server is Debian's ClickHouse 18.16, while deploy/ and
# the chart name a current one, which cannot be started here. chdb-core (PyPI) embeds the current engine in-process.
#   scripts/chdb.sh install          create .venv-chdb with chdb-core (idempotent; fast when present)
#   scripts/chdb.sh check <capture>  run the migrations' DDL and every statement of a capture (a test run with
#                                    TRAWL_SQL_CAPTURE=<capture>) on it: scripts/chdb/check.py says how
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/pip-venv.sh
# 26.9.0: the newest chdb-core today; it embeds ClickHouse 26.9 (the check prints the engine's version and fails below 25)
CHDB_CORE_VERSION=26.9.0
VENV=.venv-chdb
fail() { echo "[chdb] $*" >&2; exit 1; }
installed() { pip_venv_installed "$VENV" chdb-core "$CHDB_CORE_VERSION"; }
case "${1:-install}" in
  install) pip_venv_install chdb "$VENV" chdb-core "$CHDB_CORE_VERSION" ;;
  check)
    capture="${2:-}"
    [[ -n "$capture" ]] || fail "usage: $0 check <capture.jsonl>"
    [[ -s "$capture" ]] || fail "no statement captured in $capture (was TRAWL_SQL_CAPTURE set for the test run?)"
    installed || fail "chdb-core $CHDB_CORE_VERSION is not in $VENV: run scripts/chdb.sh install"
    work="$(mktemp -d)"
    trap 'rm -rf "$work"' EXIT
    PATH="$PWD/node_modules/.bin:$PATH" node scripts/chdb/ddl.ts trawl_check >"$work/ddl.json"
    # the check first shows that it still sees a refusal: every statement of known-bad.jsonl must be listed
    bad=$(grep -c . scripts/chdb/known-bad.jsonl)
    if "$VENV/bin/python" scripts/chdb/check.py "$work/ddl.json" scripts/chdb/known-bad.jsonl >"$work/bad.txt" 2>&1 || ! grep -q "FAIL: $bad statement" "$work/bad.txt"; then
      cat "$work/bad.txt" >&2
      fail "the check did not list the $bad statements of scripts/chdb/known-bad.jsonl as rejected: it checks nothing"
    fi
    "$VENV/bin/python" scripts/chdb/check.py "$work/ddl.json" "$capture"
    ;;
  *) fail "usage: $0 install | check <capture.jsonl>" ;;
esac
