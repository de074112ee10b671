#!/usr/bin/env bash
# Dev aid: submit a crawl to a running API and poll it until it ends. usage: crawl.sh URL [LIMIT]
set -euo pipefail
API="${TRAWL_API:-http://127.0.0.1:3002}"
t0=$(date +%s.%N)
id=$(curl -s -XPOST "$API/v2/crawl" -H 'content-type: application/json' -d "{\"url\":\"$1\",\"limit\":${2:-100}}" | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
while :; do
  s=$(curl -s "$API/v2/crawl/$id?limit=1" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["status"], d["completed"], d["total"])')
  case "$s" in scraping*) sleep 0.2 ;; *) break ;; esac
done
echo "$id $s $(echo "$(date +%s.%N) - $t0" | bc) s"
