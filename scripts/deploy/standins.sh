#!/usr/bin/env bash
# The stand-in images of deploy/compose.standins.yaml, built from the debootstrap base (podman.sh), idempotently: each
# is rebuilt only when its inputs (Containerfile, start scripts, the resolved jars' names) change. Sourced, not run.
#   trawl-standin-java:17          base + Debian's Java 17 + curl
#   trawl-standin-kafka:3.9.1      Kafka's jars as scripts/kafka.sh resolves them from Maven Central
#   trawl-standin-clickhouse:18.16 Debian's clickhouse-server package, as scripts/clickhouse.sh installs it
#   trawl-standin-registry:2.6.13  Apicurio Registry from Maven Central, as scripts/registry.sh resolves it
# shellcheck source=podman.sh
source "$(dirname "${BASH_SOURCE[0]}")/podman.sh"
STANDINS="$ROOT/deploy/standins"

# build_standin TAG CONTAINERFILE CONTEXT INPUTS: builds TAG unless its label already records INPUTS.
build_standin() {
  local tag=$1 file=$2 ctx=$3 inputs t0=$SECONDS old
  inputs=$(printf '%s\n' "$4" "$(image_label "$BASE_IMAGE")" | sha256sum | cut -c1-16)
  [[ ${TRAWL_DEPLOY_REBUILD:-0} != 1 && "$(image_label "$tag")" == "$inputs" ]] && return 0
  old=$(image_id "$tag")
  log "deploy: building $tag"
  podman build -q --format docker --network host --layers=false -f "$file" --label "trawl.inputs=$inputs" -t "$tag" "$ctx" \
    >"$DEPLOY_CACHE/standin-build.log" 2>&1 || { tail -40 "$DEPLOY_CACHE/standin-build.log" >&2; return 1; }
  drop_old "$old"
  log "deploy: $tag built in $((SECONDS - t0)) s"
}

# context NAME FILES...: a fresh build context folder holding FILES (hard links where possible)
context() {
  local dir="$DEPLOY_CACHE/context-$1"
  shift
  rm -rf "$dir" && mkdir -p "$dir"
  cp -al "$@" "$dir/" 2>/dev/null || cp -a "$@" "$dir/"
  echo "$dir"
}

standin_images() {
  base_images
  local infra="$DEPLOY_CACHE/infra" ctx
  # the same resolution as the local servers (Maven's cache makes it quick when they are installed); the Kafka of
  # deploy/compose.yaml, 3.9.1, one of the two CI tests (scripts/deploy/tested-versions.test.ts), in kafka-3.9.1/
  TRAWL_INFRA_DIR="$infra" TRAWL_KAFKA_VERSION=3.9.1 bash "$ROOT/scripts/kafka.sh" install
  TRAWL_INFRA_DIR="$infra" bash "$ROOT/scripts/registry.sh" install
  build_standin localhost/trawl-standin-java:17 "$STANDINS/java.Containerfile" "$STANDINS" "$(cat "$STANDINS/java.Containerfile")"
  ctx=$(context kafka "$infra/kafka-3.9.1/libs" "$STANDINS/kafka-entrypoint.sh" "$STANDINS/kafka-broker-api-versions.sh")
  build_standin localhost/trawl-standin-kafka:3.9.1 "$STANDINS/kafka.Containerfile" "$ctx" \
    "$(cat "$STANDINS"/kafka* "$STANDINS/java.Containerfile"; ls "$infra/kafka-3.9.1/libs")"
  ctx=$(context clickhouse "$STANDINS/clickhouse-entrypoint.sh")
  build_standin localhost/trawl-standin-clickhouse:18.16 "$STANDINS/clickhouse.Containerfile" "$ctx" "$(cat "$STANDINS"/clickhouse*)"
  ctx=$(context registry "$infra/registry/app")
  build_standin localhost/trawl-standin-registry:2.6.13 "$STANDINS/registry.Containerfile" "$ctx" \
    "$(cat "$STANDINS/registry.Containerfile" "$STANDINS/java.Containerfile"; ls "$infra/registry/app")"
  rm -rf "$DEPLOY_CACHE"/context-*
}
