#!/usr/bin/env bash
# A rolling upgrade from an older release under a running crawl (issue 46 item 2; not part of `npm test`: it installs
# the old release and runs ~10 processes): a worktree of the old commit (default 01073fa, the last release on kafkajs)
# in ROLLING_OLD_DIR (default /tmp/trawl-old) with its own `npm install` (made once, reused after), then
# bench/rolling-upgrade.ts against the Kafka and ClickHouse of KAFKA_BROKERS / CLICKHOUSE_URL (default the shared
# ones of scripts/infra.sh). Prints the checks as JSON and writes bench/results/<date>-rolling-upgrade.json; exits 1
# when a check fails.
# usage: bash scripts/rolling-upgrade.sh [old commit]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
commit="${1:-01073fa}"
old="${ROLLING_OLD_DIR:-/tmp/trawl-old}"
if [ ! -e "$old/bin/trawl.js" ]; then
  git -C "$root" worktree add --detach "$old" "$commit"
fi
if [ "$(git -C "$old" rev-parse --short HEAD)" != "$(git -C "$root" rev-parse --short "$commit")" ]; then
  echo "rolling-upgrade: $old holds $(git -C "$old" rev-parse --short HEAD), not $commit: remove it (git worktree remove $old) or set ROLLING_OLD_DIR" >&2
  exit 2
fi
if [ ! -e "$old/node_modules/.package-lock.json" ]; then
  (cd "$old" && npm install --no-audit --no-fund)
fi
cd "$root"
exec npx node bench/rolling-upgrade.ts "$old"
