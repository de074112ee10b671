#!/usr/bin/env bash
# Local single-node ZooKeeper from Debian's zookeeper package, data under .infra/zookeeper: the coordination service of
# the replicated ClickHouse tables (scripts/clickhouse.sh starts it when TRAWL_CLICKHOUSE_REPLICAS > 1).
# usage: zookeeper.sh install|up|down|status
# Port: TRAWL_ZOOKEEPER_PORT (client, 12181). No admin server (its default port 8080 is too often taken).
source "$(dirname "$0")/lib.sh"
ZDIR="$INFRA_DIR/zookeeper"
HOST=127.0.0.1
PORT="${TRAWL_ZOOKEEPER_PORT:-12181}"
PIDFILE="$ZDIR/zookeeper.pid"
JAR=/usr/share/java/zookeeper.jar

install() {
  [[ -f "$JAR" ]] && command -v java >/dev/null && return 0
  log "zookeeper: installing Debian package zookeeper"
  apt_install zookeeper
}

configure() {
  mkdir -p "$ZDIR/data" "$ZDIR/logs"
  cat >"$ZDIR/zoo.cfg" <<CFG
tickTime=2000
dataDir=$ZDIR/data
clientPort=$PORT
clientPortAddress=$HOST
maxClientCnxns=0
admin.enableServer=false
4lw.commands.whitelist=ruok,srvr
autopurge.snapRetainCount=3
autopurge.purgeInterval=1
CFG
}

# ZooKeeper answers the four-letter word "srvr" with its mode once it serves sessions ("ruok" is answered before).
zookeeper_ready() { [[ "$( (exec 3<>"/dev/tcp/$HOST/$PORT" && printf srvr >&3 && timeout 2 cat <&3) 2>/dev/null)" == *"Mode: standalone"* ]]; }

up() {
  if pid_alive "$PIDFILE"; then log "zookeeper: already running on $HOST:$PORT"; return 0; fi
  if port_busy "$HOST" "$PORT"; then adopt_or_refuse zookeeper "$HOST:$PORT" TRAWL_ZOOKEEPER_PORT zookeeper_ready; return; fi
  install
  configure
  log "zookeeper: starting on $HOST:$PORT"
  nohup java -Xms64m -Xmx256m -Dzookeeper.admin.enableServer=false -cp "$JAR" \
    org.apache.zookeeper.server.quorum.QuorumPeerMain "$ZDIR/zoo.cfg" >"$ZDIR/logs/stdout.log" 2>&1 &
  echo $! >"$PIDFILE"
  wait_ready zookeeper "$PIDFILE" zookeeper_ready "$ZDIR/logs/stdout.log"
}

down() { stop_pid "$PIDFILE" zookeeper; }
status() {
  local port; port=$(sed -n 's/^clientPort=//p' "$ZDIR/zoo.cfg" 2>/dev/null || true)
  print_role zookeeper "coordination of the ClickHouse replicas" "$PIDFILE" "$HOST:${port:-$PORT}"
}

"${1:-status}"
