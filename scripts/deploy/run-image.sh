#!/usr/bin/env bash
# The image builds and runs (part of `npm run check:deploy`; issue 37): builds deploy/Dockerfile with podman from the
# debootstrap bases of podman.sh, without and with Chromium, and records each image's size and build time in
# .deploy-cache/images.txt; then each image runs `trawl all --embedded` as its non-root user and crawls a 20-page
# fixture site served from the host, checked exactly (crawl-check.ts): the plain image fetching statically, the
# Chromium image rendering every page (RENDER=always). The load guard is off (MAX_CPU=1, MAX_RAM=1) as in the
# integration tests: it reads the whole machine's load, which on a shared CI machine is not the container's.
# Ports: TRAWL_DEPLOY_PORT (19710) the API, +1 the fixture site, +2 metrics; the containers share the host's network.
set -euo pipefail
source "$(dirname "$0")/podman.sh"
cd "$ROOT"
PORT="${TRAWL_DEPLOY_PORT:-19710}"
IMAGE=localhost/trawl:check
t_all=$SECONDS

base_images

# build NAME TAG BUILD-ARGS...: builds the image (the registries need the host's network) and records size and time
build() {
  local tag=$1 t0=$SECONDS size
  shift
  log "deploy: podman build $tag $*"
  podman build -q --format docker --network host -f deploy/Dockerfile --build-arg NODE_IMAGE="$NODE_BASE_IMAGE" "$@" \
    -t "$tag" . >"$DEPLOY_CACHE/build.log" 2>&1 || { tail -40 "$DEPLOY_CACHE/build.log" >&2; return 1; }
  size=$(podman image inspect --format '{{.Size}}' "$tag")
  printf '%s %s MB built in %s s (%s)\n' "$tag" "$((size / 1000000))" "$((SECONDS - t0))" "$(date -u +%FT%TZ)" | tee -a "$DEPLOY_CACHE/images.txt" >&2
}

# run_and_crawl TAG ENV...: runs `trawl all --embedded` from TAG on the host's network, checks that no process of the
# container is root, and crawls the fixture site through its API; the container and its volume go afterwards.
run_and_crawl() {
  local tag=$1 name="trawl-check-$$" rc=0
  shift
  podman rm -f -v "$name" >/dev/null 2>&1 || true
  podman run -d --name "$name" --network host \
    -e HOST=127.0.0.1 -e PORT="$PORT" -e METRICS_PORT="$((PORT + 2))" -e USE_DB_AUTHENTICATION=false \
    -e ALLOW_PRIVATE_CRAWL_TARGETS=true -e MAX_CPU=1 -e MAX_RAM=1 -e BULL_AUTH_KEY="check-$$-$RANDOM" "$@" "$tag" all --embedded >/dev/null
  # shellcheck disable=SC2064 # the name is fixed now
  trap "podman rm -f -v $name >/dev/null 2>&1 || true" RETURN
  node scripts/deploy/crawl-check.ts --api "http://127.0.0.1:$PORT" --port "$((PORT + 1))" || rc=$?
  local users
  users=$(podman top "$name" user | tail -n +2 | sort -u | tr '\n' ' ')
  if [[ $users == *root* || -z $users ]]; then log "deploy: $tag runs as [$users], expected a non-root user"; rc=1; else log "deploy: $tag runs as [$users]"; fi
  ((rc == 0)) || podman logs --tail 40 "$name" >&2 || true
  return "$rc"
}

build "$IMAGE"
run_and_crawl "$IMAGE"
build "$IMAGE-chromium" --build-arg WITH_CHROMIUM=true
run_and_crawl "$IMAGE-chromium" -e RENDER=always
# the layers of earlier builds no tagged image uses any more (each run's sources make a new top layer)
podman image prune -f >/dev/null
log "deploy: images built, run and crawled in $((SECONDS - t_all)) s"
