#!/usr/bin/env bash
# Local real infrastructure for tests, CI and benchmarks (DESIGN.md section 7).
# usage: infra.sh up|down|status|install [kafka|clickhouse|registry|chromium|seaweedfs ...]   (default: all)
# Idempotent; `down` stops only the processes that `up` started (pid files under .infra/).
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
cmd="${1:-status}"; shift || true
services=("$@"); [[ ${#services[@]} -eq 0 ]] && services=(kafka clickhouse registry chromium seaweedfs)
case "$cmd" in
  up|install)
    # start the two in parallel: they are independent and each takes a few seconds
    pids=(); for s in "${services[@]}"; do bash "$HERE/$s.sh" "$cmd" & pids+=($!); done
    rc=0; for p in "${pids[@]}"; do wait "$p" || rc=1; done; exit $rc ;;
  down|status) for s in "${services[@]}"; do bash "$HERE/$s.sh" "$cmd"; done ;;
  *) echo "usage: infra.sh up|down|status|install [kafka|clickhouse|registry|chromium|seaweedfs]" >&2; exit 2 ;;
esac
