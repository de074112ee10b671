#!/usr/bin/env bash
# `npm start`: starts the local Kafka and ClickHouse (installing them when missing) and every Trawl role in one
# process on http://127.0.0.1:3002. Ctrl-C stops Trawl; `npm run infra -- down` stops the infrastructure.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
if [[ -z "${KAFKA_BROKERS:-}" && -z "${CLICKHOUSE_URL:-}" ]]; then
  bash "$ROOT/scripts/infra.sh" up kafka clickhouse
fi
exec node "$ROOT/bin/trawl.js" all
