#!/usr/bin/env bash
# The compose stack runs (issue 37): podman-compose (PyPI) brings up deploy/compose.yaml with deploy/compose.standins.yaml
# (stand-ins for the public images, see there why), waits until every service's own healthcheck passes, scales every
# role the file lets scale (no host port) to two replicas with --scale, crawls a 20-page fixture site served from the
# host through the API and checks it exactly (crawl-check.ts), checks that no container restarted, then tears
# everything down with its volumes.
# The trawl image is the one run-image.sh built (localhost/trawl:check, tagged trawl:dev as compose.yaml names it).
# Ports: 19720 the API on loopback (fixed in compose.standins.yaml), 19721 the fixture site (on every address: the
# containers reach it as host.containers.internal). Project name: trawl-check.
set -euo pipefail
source "$(dirname "$0")/standins.sh"
cd "$ROOT"
API_PORT=19720
PODMAN_COMPOSE_VERSION=1.6.0
PROJECT=trawl-check
SCALED=(frontier fetch-render convert extract-json sink webhook-emit) # api publishes a host port: one replica
t_all=$SECONDS

standin_images
podman image exists localhost/trawl:check || { log "deploy: localhost/trawl:check missing: run scripts/deploy/run-image.sh first"; exit 1; }
podman tag localhost/trawl:check localhost/trawl:dev
ensure_venv "$ROOT/.venv"
"$ROOT/.venv/bin/pip" freeze 2>/dev/null | grep -qx "podman-compose==$PODMAN_COMPOSE_VERSION" \
  || "$ROOT/.venv/bin/pip" install -q "podman-compose==$PODMAN_COMPOSE_VERSION"
log "deploy: images ready in $((SECONDS - t_all)) s"

export BULL_AUTH_KEY="compose-check-$RANDOM$RANDOM" # USE_DB_AUTHENTICATION: compose.yaml's default (true)
compose() { "$ROOT/.venv/bin/podman-compose" -p "$PROJECT" -f deploy/compose.yaml -f deploy/compose.standins.yaml "$@"; }
project_containers() { podman ps -a --filter "label=com.docker.compose.project=$PROJECT" --format '{{.Names}}'; }
teardown() {
  # the containers first, each with its anonymous volumes (the images' VOLUMEs): `down` knows only one replica per
  # service and leaves anonymous volumes; then `down -v` removes the named volumes and the network
  local left; left=$(project_containers)
  # shellcheck disable=SC2086 # one name a word
  [[ -z $left ]] || podman rm -f -v -t 20 $left >/dev/null 2>&1 || true
  compose down -v >"$DEPLOY_CACHE/compose-down.log" 2>&1 || tail -20 "$DEPLOY_CACHE/compose-down.log" >&2
  podman network exists "${PROJECT}_default" && podman network rm -f "${PROJECT}_default" >/dev/null
  left=$(project_containers; podman volume ls -q --filter "label=com.docker.compose.project=$PROJECT")
  [[ -z $left ]] || { log "deploy: left after teardown: $left"; return 1; }
}
teardown
trap teardown EXIT

# wait_healthy COUNT SECONDS: waits until COUNT containers of the project pass their compose healthcheck. Podman 4.3
# (Debian 12) runs healthchecks from systemd timers, and there is no systemd here: they are run from this loop (the
# same check, `podman healthcheck run`). For the same reason podman-compose cannot wait for depends_on's
# service_healthy, hence the servers are started and waited for before the roles.
wait_healthy() {
  local want=$1 deadline=$((SECONDS + $2)) c sick
  local -A passed=() # each container's check is a process started in it (a JVM or Node for most): once it passed, not again
  while :; do
    sick=()
    for c in $(project_containers); do
      [[ -n ${passed[$c]:-} ]] && continue
      if podman healthcheck run "$c" >/dev/null 2>&1; then passed[$c]=1; else sick+=("$c"); fi
    done
    ((${#passed[@]} >= want && ${#sick[@]} == 0)) && { log "deploy: ${#passed[@]} containers healthy after $((SECONDS - t_all)) s"; return 0; }
    if ((SECONDS > deadline)); then
      log "deploy: ${#passed[@]} of $want healthy; not: ${sick[*]}"
      for c in "${sick[@]}"; do echo "--- $c" >&2; podman logs --tail 30 "$c" >&2 || true; done
      return 1
    fi
    sleep 5
  done
}

log "deploy: podman-compose up (servers)"
compose up -d --no-build kafka clickhouse registry >"$DEPLOY_CACHE/compose-up.log" 2>&1 || { tail -30 "$DEPLOY_CACHE/compose-up.log" >&2; exit 1; }
wait_healthy 3 240
log "deploy: podman-compose up (roles)"
compose up -d --no-build >>"$DEPLOY_CACHE/compose-up.log" 2>&1 || { tail -30 "$DEPLOY_CACHE/compose-up.log" >&2; exit 1; }
wait_healthy 10 300
for role in "${SCALED[@]}"; do
  # podman-compose honours one --scale per command (containers/podman-compose#1532): one role at a time
  compose up -d --no-build --no-deps --scale "$role=2" "$role" >>"$DEPLOY_CACHE/compose-up.log" 2>&1 || { tail -30 "$DEPLOY_CACHE/compose-up.log" >&2; exit 1; }
done
want=$((10 + ${#SCALED[@]}))
[[ $(project_containers | wc -l) == "$want" ]] || { log "deploy: expected $want containers, got: $(project_containers | tr '\n' ' ')"; exit 1; }
wait_healthy "$want" 300
# an API key in the stack's ClickHouse, made with the image's own command in a role's container
key=$(podman exec trawl-check_sink_1 node bin/trawl.js keys create --team deploy-check 2>"$DEPLOY_CACHE/keys.log") \
  || { cat "$DEPLOY_CACHE/keys.log" >&2; exit 1; }
node scripts/deploy/crawl-check.ts --api "http://127.0.0.1:$API_PORT" --api-key "$key" --listen 0.0.0.0 --port "$((API_PORT + 1))" \
  --origin-host host.containers.internal
# no container stopped on the way (restart: unless-stopped would hide a role that crashed at start)
restarted=$(for c in $(project_containers); do n=$(podman inspect --format '{{.RestartCount}}' "$c"); ((n == 0)) || echo "$c×$n"; done)
[[ -z $restarted ]] || { log "deploy: restarted: $(tr '\n' ' ' <<<"$restarted")"; for c in $restarted; do podman logs --tail 5 "${c%×*}" >&2; done; exit 1; }
log "deploy: compose stack up, scaled, crawled in $((SECONDS - t_all)) s, no restart; tearing down"
