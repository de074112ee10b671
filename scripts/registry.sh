#!/usr/bin/env bash
# Local Confluent-compatible Schema Registry: Apicurio Registry 2.6 (in-memory storage, runs on Java 17), from the
# distribution archive on Maven Central. Its Confluent API is served under /apis/ccompat/v7.
# Why Apicurio: Confluent's own registry is not on Maven Central and Karapace is not on PyPI (DESIGN.md section 7).
# usage: registry.sh install|up|down|status
# Port: TRAWL_REGISTRY_PORT (18181; outside 18080-18089, which a shared test corpus uses).
source "$(dirname "$0")/lib.sh"
RDIR="$INFRA_DIR/registry"
HOST=127.0.0.1
PORT="${TRAWL_REGISTRY_PORT:-18181}"
PIDFILE="$RDIR/registry.pid"
VERSION=2.6.13.Final
JAR="$RDIR/app/apicurio-registry-app-$VERSION-runner.jar"

install() {
  if [[ -f "$RDIR/app/.complete" ]]; then return 0; fi
  need_java_maven
  log "registry: resolving Apicurio Registry $VERSION from Maven Central"
  mkdir -p "$RDIR/app"
  mvn -q -B -f "$ROOT/scripts/registry/pom.xml" dependency:unpack -Dregistry.version="$VERSION" \
    -DoutputDirectory="$RDIR/app" -Dregistry.markers="$RDIR/markers" >"$RDIR/mvn.log" 2>&1 || { cat "$RDIR/mvn.log" >&2; return 1; }
  [[ -f "$JAR" ]] || { log "registry: $JAR missing after unpack"; return 1; }
  touch "$RDIR/app/.complete"
}

up() {
  if pid_alive "$PIDFILE"; then log "registry: already running on $HOST:$PORT"; return 0; fi
  if port_busy "$HOST" "$PORT"; then adopt_or_refuse registry "$HOST:$PORT" TRAWL_REGISTRY_PORT registry_ready; return; fi
  install
  mkdir -p "$RDIR/logs"
  log "registry: starting on $HOST:$PORT"
  nohup java -Xms64m -Xmx384m -XX:+UseSerialGC -Dquarkus.http.host="$HOST" -Dquarkus.http.port="$PORT" \
    -Dquarkus.log.level=WARN -jar "$JAR" >"$RDIR/logs/stdout.log" 2>&1 &
  echo $! >"$PIDFILE"
  wait_ready registry "$PIDFILE" registry_ready "$RDIR/logs/stdout.log"
}

# A Confluent-compatible registry answers the subjects list with a JSON array.
registry_ready() {
  local subjects
  subjects=$(curl -sf -m 5 "http://$HOST:$PORT/apis/ccompat/v7/subjects" 2>/dev/null) || return 1
  [[ "$subjects" == \[*\] ]]
}

down() { stop_pid "$PIDFILE" registry; }
status() { print_role registry "schema registry (Apicurio, Confluent-compatible API)" "$PIDFILE" "http://$HOST:$PORT/apis/ccompat/v7"; }

"${1:-status}"
