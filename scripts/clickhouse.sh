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
  local i urls=()
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
  if port_busy "$HOST" "$HTTP_PORT"; then adopt_or_refuse clickhouse "$HOST:$HTTP_PORT" TRAWL_CLICKHOUSE_HTTP_PORT clickhouse_identity; return; fi
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

down() {
  local i
  for i in $(replica_ids); do select_replica "$i"; stop_pid "$PIDFILE" "$(replica_name)"; done
  if ((REPLICAS > 1)); then bash "$(dirname "$0")/zookeeper.sh" down; fi
}
status() {
  local i
  for i in $(replica_ids); do select_replica "$i"; print_status "$(replica_name)" "$PIDFILE" "$HOST:$HTTP_PORT"; done
  if ((REPLICAS > 1)); then bash "$(dirname "$0")/zookeeper.sh" status; fi
}

"${1:-status}"
