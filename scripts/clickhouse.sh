#!/usr/bin/env bash
# Local ClickHouse server from Debian's clickhouse-server package, data under .infra/clickhouse.
# usage: clickhouse.sh install|up|down|status
# Ports: TRAWL_CLICKHOUSE_HTTP_PORT (HTTP, 18123), TRAWL_CLICKHOUSE_TCP_PORT (native, 19000).
# HTTPS as well when TRAWL_CLICKHOUSE_HTTPS_PORT is set, with the PEM files TRAWL_CLICKHOUSE_TLS_CERT and
# TRAWL_CLICKHOUSE_TLS_KEY; TRAWL_CLICKHOUSE_PASSWORD gives the default user a password (default: none).
# A cluster: TRAWL_CLICKHOUSE_REPLICAS=N (> 1) starts ZooKeeper (scripts/zookeeper.sh, TRAWL_ZOOKEEPER_PORT) and N
# servers as replicas of one shard of the cluster TRAWL_CLICKHOUSE_CLUSTER (trawl), each in .infra/clickhouse/replica-<i>
# with the ports above + i - 1 (and TRAWL_CLICKHOUSE_INTERSERVER_PORT, 19009, + i - 1 for replication); `up` prints
# the CLICKHOUSE_URL and CLICKHOUSE_CLUSTER to use, and starts again only the replicas that are not running.
# `up` refuses a count of replicas other than the one these scripts run (down, then up, goes from one to the other),
# and a replica's port held by a process they did not start. `down` stops every server they started (and ZooKeeper),
# whatever the variables; `status` lists each one with its role and port.
source "$(dirname "$0")/lib.sh"
HOST=127.0.0.1
REPLICAS="${TRAWL_CLICKHOUSE_REPLICAS:-1}"
CLUSTER="${TRAWL_CLICKHOUSE_CLUSTER:-trawl}"
BASE_HTTP="${TRAWL_CLICKHOUSE_HTTP_PORT:-18123}"
BASE_TCP="${TRAWL_CLICKHOUSE_TCP_PORT:-19000}"
BASE_INTERSERVER="${TRAWL_CLICKHOUSE_INTERSERVER_PORT:-19009}"
HTTPS_PORT="${TRAWL_CLICKHOUSE_HTTPS_PORT:-}"
ZK_PORT="${TRAWL_ZOOKEEPER_PORT:-12181}"
[[ "$REPLICAS" =~ ^[1-9][0-9]*$ ]] || { log "clickhouse: TRAWL_CLICKHOUSE_REPLICAS=$REPLICAS is not a number >= 1"; exit 1; }
# replica I (1-based; 0: the single server): its folder, ports and pid file
select_replica() {
  local i=$1 off=$(( ${1:-1} > 0 ? $1 - 1 : 0 ))
  REPLICA=$i
  if ((i == 0)); then CDIR="$INFRA_DIR/clickhouse"; else CDIR="$INFRA_DIR/clickhouse/replica-$i"; fi
  HTTP_PORT=$((BASE_HTTP + off)); TCP_PORT=$((BASE_TCP + off)); INTERSERVER_PORT=$((BASE_INTERSERVER + off))
  PIDFILE="$CDIR/clickhouse.pid"
}
replica_name() { if ((REPLICA == 0)); then echo clickhouse; else echo "clickhouse replica $REPLICA"; fi; }
replica_ids() { if ((REPLICAS == 1)); then echo 0; else seq 1 "$REPLICAS"; fi; }
select_replica "$(replica_ids | head -1)"
# the number of servers `up` last started here (1: one server without a cluster; N > 1: N replicas)
LAYOUT="$INFRA_DIR/clickhouse/layout"

# layout_name N: what N servers are, in words.
layout_name() { if (($1 == 1)); then echo "one server (no cluster)"; else echo "$1 replicas of one shard"; fi; }

# running_layout: the layout of the servers these scripts started that run now (0: none runs).
running_layout() {
  if pid_alive "$INFRA_DIR/clickhouse/clickhouse.pid"; then echo 1; return; fi
  if (($(alive_count "$INFRA_DIR"/clickhouse/replica-*/clickhouse.pid) == 0)); then echo 0; return; fi
  if [[ -f "$LAYOUT" ]]; then cat "$LAYOUT"; else find "$INFRA_DIR/clickhouse" -maxdepth 1 -name 'replica-*' -type d | wc -l; fi
}

install() {
  ((REPLICAS == 1)) || bash "$(dirname "$0")/zookeeper.sh" install
  command -v clickhouse-server >/dev/null && return 0
  log "clickhouse: installing Debian package clickhouse-server"
  apt_install clickhouse-server
}

# ZooKeeper, this server's macros, the cluster's hosts and the queue of ON CLUSTER statements (replicas only)
cluster_config() {
  local r
  cat <<XML
  <interserver_http_host>$HOST</interserver_http_host>
  <interserver_http_port>$INTERSERVER_PORT</interserver_http_port>
  <zookeeper><node><host>$HOST</host><port>$ZK_PORT</port></node><session_timeout_ms>10000</session_timeout_ms></zookeeper>
  <macros><shard>1</shard><replica>r$REPLICA</replica></macros>
  <remote_servers><$CLUSTER><shard><internal_replication>true</internal_replication>
$(for r in $(seq 1 "$REPLICAS"); do echo "    <replica><host>$HOST</host><port>$((BASE_TCP + r - 1))</port></replica>"; done)
  </shard></$CLUSTER></remote_servers>
  <distributed_ddl><path>/clickhouse/task_queue/ddl</path></distributed_ddl>
XML
}

configure() {
  mkdir -p "$CDIR/data" "$CDIR/tmp" "$CDIR/logs" "$CDIR/user_files" "$CDIR/format_schemas"
  cat >"$CDIR/config.xml" <<XML
<?xml version="1.0"?>
<yandex>
  <logger>
    <level>warning</level>
    <log>$CDIR/logs/clickhouse-server.log</log>
    <errorlog>$CDIR/logs/clickhouse-server.err.log</errorlog>
    <size>100M</size>
    <count>2</count>
  </logger>
  <http_port>$HTTP_PORT</http_port>
  <tcp_port>$TCP_PORT</tcp_port>
$( [ -n "$HTTPS_PORT" ] && tls_config)
$( ((REPLICA > 0)) && cluster_config)
  <listen_host>$HOST</listen_host>
  <max_connections>512</max_connections>
  <keep_alive_timeout>10</keep_alive_timeout>
  <max_concurrent_queries>200</max_concurrent_queries>
  <uncompressed_cache_size>268435456</uncompressed_cache_size>
  <mark_cache_size>268435456</mark_cache_size>
  <path>$CDIR/data/</path>
  <tmp_path>$CDIR/tmp/</tmp_path>
  <user_files_path>$CDIR/user_files/</user_files_path>
  <format_schema_path>$CDIR/format_schemas/</format_schema_path>
  <users_config>$CDIR/users.xml</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <timezone>UTC</timezone>
  <mlock_executable>false</mlock_executable>
$( [ "${TRAWL_CLICKHOUSE_QUERY_LOG:-0}" = 1 ] && echo "  <query_log><database>system</database><table>query_log</table><flush_interval_milliseconds>1000</flush_interval_milliseconds></query_log>")
</yandex>
XML
  cat >"$CDIR/users.xml" <<XML
<?xml version="1.0"?>
<yandex>
  <profiles>
    <default>
      <max_memory_usage>4000000000</max_memory_usage>
      <load_balancing>random</load_balancing>
$( [ "${TRAWL_CLICKHOUSE_QUERY_LOG:-0}" = 1 ] && echo "      <log_queries>1</log_queries>")
    </default>
  </profiles>
  <users>
    <default>
      $(password_xml)
      <networks><ip>127.0.0.1</ip><ip>::1</ip></networks>
      <profile>default</profile>
      <quota>default</quota>
    </default>
  </users>
  <quotas><default><interval><duration>3600</duration><queries>0</queries><errors>0</errors>
    <result_rows>0</result_rows><read_rows>0</read_rows><execution_time>0</execution_time></interval></default></quotas>
</yandex>
XML
}

# https_port and the OpenSSL server settings of ClickHouse 18.16 (Poco's SSLManager keys)
tls_config() {
  cat <<XML
  <https_port>$HTTPS_PORT</https_port>
  <openSSL><server>
    <certificateFile>$TRAWL_CLICKHOUSE_TLS_CERT</certificateFile>
    <privateKeyFile>$TRAWL_CLICKHOUSE_TLS_KEY</privateKeyFile>
    <verificationMode>none</verificationMode>
    <loadDefaultCAFile>false</loadDefaultCAFile>
    <cacheSessions>true</cacheSessions>
    <disableProtocols>sslv2,sslv3,tlsv1,tlsv1_1</disableProtocols>
    <preferServerCiphers>true</preferServerCiphers>
  </server></openSSL>
XML
}

# the default user's password, as its SHA-256 (the password itself is not written to disk)
password_xml() {
  if [ -z "${TRAWL_CLICKHOUSE_PASSWORD:-}" ]; then echo "<password></password>"; return; fi
  echo "<password_sha256_hex>$(printf '%s' "$TRAWL_CLICKHOUSE_PASSWORD" | sha256sum | cut -d' ' -f1)</password_sha256_hex>"
}

up() {
  local i urls=() have
  have=$(running_layout)
  if ((have > 0 && have != REPLICAS)); then
    log "clickhouse: TRAWL_CLICKHOUSE_REPLICAS=$REPLICAS asks for $(layout_name "$REPLICAS"), but these scripts run $(layout_name "$have") in $INFRA_DIR/clickhouse: not mixing them"
    log "clickhouse: to go from one to the other: npm run infra -- down clickhouse (stops every server these scripts started, whatever the variables), then TRAWL_CLICKHOUSE_REPLICAS=$REPLICAS npm run infra -- up clickhouse; Trawl creates its tables on the new servers when it starts (the rows of the old ones are not carried over)"
    return 1
  fi
  # a replica's port held by a process these scripts did not start: refused before anything starts
  if ((REPLICAS > 1)); then
    for i in $(replica_ids); do
      select_replica "$i"
      if ! pid_alive "$PIDFILE" && port_busy "$HOST" "$HTTP_PORT"; then
        log "$(replica_name): $HOST:$HTTP_PORT is in use by a process these scripts did not start; a replica must be started by them (its cluster configuration: ZooKeeper, macros, the cluster's hosts): stop that process, or set TRAWL_CLICKHOUSE_HTTP_PORT to the first of $REPLICAS free ports"
        return 1
      fi
    done
  fi
  mkdir -p "$INFRA_DIR/clickhouse"
  echo "$REPLICAS" >"$LAYOUT"
  if ((REPLICAS > 1)); then bash "$(dirname "$0")/zookeeper.sh" up || return; fi
  for i in $(replica_ids); do
    select_replica "$i"
    up_one || return
    urls+=("http://$HOST:$HTTP_PORT")
  done
  if ((REPLICAS > 1)); then
    log "clickhouse: $REPLICAS replicas of one shard of cluster $CLUSTER; use:"
    echo "CLICKHOUSE_URL=$(IFS=,; echo "${urls[*]}")"
    echo "CLICKHOUSE_CLUSTER=$CLUSTER"
  fi
}

up_one() {
  local name; name=$(replica_name)
  if pid_alive "$PIDFILE"; then log "$name: already running on $HOST:$HTTP_PORT"; return 0; fi
  if port_busy "$HOST" "$HTTP_PORT"; then
    # a replica must be one of ours: its configuration (ZooKeeper, macros, the cluster's hosts) makes it a replica
    if ((REPLICA > 0)); then
      log "$name: $HOST:$HTTP_PORT is in use by a process these scripts did not start; a replica must be started by them (its cluster configuration): stop that process, or set TRAWL_CLICKHOUSE_HTTP_PORT to the first of $REPLICAS free ports"
      return 1
    fi
    adopt_or_refuse clickhouse "$HOST:$HTTP_PORT" TRAWL_CLICKHOUSE_HTTP_PORT clickhouse_identity; return
  fi
  need_free clickhouse "$HOST" "$TCP_PORT" TRAWL_CLICKHOUSE_TCP_PORT
  ((REPLICA == 0)) || need_free clickhouse "$HOST" "$INTERSERVER_PORT" TRAWL_CLICKHOUSE_INTERSERVER_PORT
  if [ -n "$HTTPS_PORT" ]; then
    need_free clickhouse "$HOST" "$HTTPS_PORT" TRAWL_CLICKHOUSE_HTTPS_PORT
    if [ ! -r "${TRAWL_CLICKHOUSE_TLS_CERT:-}" ] || [ ! -r "${TRAWL_CLICKHOUSE_TLS_KEY:-}" ]; then
      log "clickhouse: TRAWL_CLICKHOUSE_HTTPS_PORT needs readable PEM files TRAWL_CLICKHOUSE_TLS_CERT and TRAWL_CLICKHOUSE_TLS_KEY"; return 1
    fi
  fi
  install
  configure
  log "$name: starting on $HOST:$HTTP_PORT${HTTPS_PORT:+ (https on $HTTPS_PORT)}"
  nohup clickhouse-server --config-file="$CDIR/config.xml" >"$CDIR/logs/stdout.log" 2>&1 &
  echo $! >"$PIDFILE"
  wait_ready "$name" "$PIDFILE" clickhouse_ready "$CDIR/logs/stdout.log" "$CDIR/logs/clickhouse-server.err.log"
}

# ClickHouse answers /ping with "Ok." and SELECT version() with a version number.
clickhouse_identity() {
  clickhouse_ready || return 1
  local version
  version=$(curl -s -m 5 "http://$HOST:$HTTP_PORT/?query=SELECT%20version()" 2>/dev/null) || return 1
  [[ "$version" =~ ^[0-9]+\.[0-9]+ ]]
}

clickhouse_ready() { [[ "$(curl -s -m 5 "http://$HOST:$HTTP_PORT/ping" 2>/dev/null)" == "Ok." ]]; }

# found_servers: "NAME|ROLE|PIDFILE|HTTP PORT" of every server these scripts configured here (whatever the variables).
found_servers() {
  local d i cluster
  if [[ -f "$INFRA_DIR/clickhouse/config.xml" ]]; then
    echo "clickhouse|one server, no cluster|$INFRA_DIR/clickhouse/clickhouse.pid|$(xml_value "$INFRA_DIR/clickhouse/config.xml" http_port)"
  fi
  for d in "$INFRA_DIR"/clickhouse/replica-*; do
    [[ -f "$d/config.xml" ]] || continue
    i=${d##*-}
    cluster=$(sed -n 's:.*<remote_servers><\([A-Za-z0-9_]*\)>.*:\1:p' "$d/config.xml" | head -1)
    echo "clickhouse replica $i|replica r$i of shard 1 of cluster $cluster|$d/clickhouse.pid|$(xml_value "$d/config.xml" http_port)"
  done
}

down() {
  local name role pidfile port any=0
  while IFS='|' read -r name role pidfile port; do
    any=1
    stop_pid "$pidfile" "$name"
  done < <(found_servers)
  ((any)) || log "clickhouse: not running (started by us)"
  if [[ -f "$INFRA_DIR/zookeeper/zookeeper.pid" ]]; then bash "$(dirname "$0")/zookeeper.sh" down; fi
  rm -f "$LAYOUT"
}
status() {
  local name role pidfile port any=0
  while IFS='|' read -r name role pidfile port; do
    any=1
    print_role "$name" "$role" "$pidfile" "$HOST:$port"
  done < <(found_servers)
  if ((!any)); then
    local i
    for i in $(replica_ids); do select_replica "$i"; print_role "$(replica_name)" "$( ((i == 0)) && echo "one server, no cluster" || echo "replica r$i of shard 1 of cluster $CLUSTER")" "$PIDFILE" "$HOST:$HTTP_PORT"; done
  fi
  if [[ -d "$INFRA_DIR/zookeeper" ]] || ((REPLICAS > 1)); then bash "$(dirname "$0")/zookeeper.sh" status; fi
}

"${1:-status}"
