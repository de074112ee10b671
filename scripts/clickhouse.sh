#!/usr/bin/env bash
# Local ClickHouse server from Debian's clickhouse-server package, data under .infra/clickhouse.
# usage: clickhouse.sh install|up|down|status
# Ports: TRAWL_CLICKHOUSE_HTTP_PORT (HTTP, 18123), TRAWL_CLICKHOUSE_TCP_PORT (native, 19000).
# HTTPS as well when TRAWL_CLICKHOUSE_HTTPS_PORT is set, with the PEM files TRAWL_CLICKHOUSE_TLS_CERT and
# TRAWL_CLICKHOUSE_TLS_KEY; TRAWL_CLICKHOUSE_PASSWORD gives the default user a password (default: none).
source "$(dirname "$0")/lib.sh"
CDIR="$INFRA_DIR/clickhouse"
HOST=127.0.0.1
HTTP_PORT="${TRAWL_CLICKHOUSE_HTTP_PORT:-18123}"
TCP_PORT="${TRAWL_CLICKHOUSE_TCP_PORT:-19000}"
HTTPS_PORT="${TRAWL_CLICKHOUSE_HTTPS_PORT:-}"
PIDFILE="$CDIR/clickhouse.pid"

install() {
  command -v clickhouse-server >/dev/null && return 0
  log "clickhouse: installing Debian package clickhouse-server"
  apt_install clickhouse-server
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
  if pid_alive "$PIDFILE"; then log "clickhouse: already running on $HOST:$HTTP_PORT"; return 0; fi
  if port_busy "$HOST" "$HTTP_PORT"; then adopt_or_refuse clickhouse "$HOST:$HTTP_PORT" TRAWL_CLICKHOUSE_HTTP_PORT clickhouse_identity; return; fi
  need_free clickhouse "$HOST" "$TCP_PORT" TRAWL_CLICKHOUSE_TCP_PORT
  if [ -n "$HTTPS_PORT" ]; then
    need_free clickhouse "$HOST" "$HTTPS_PORT" TRAWL_CLICKHOUSE_HTTPS_PORT
    if [ ! -r "${TRAWL_CLICKHOUSE_TLS_CERT:-}" ] || [ ! -r "${TRAWL_CLICKHOUSE_TLS_KEY:-}" ]; then
      log "clickhouse: TRAWL_CLICKHOUSE_HTTPS_PORT needs readable PEM files TRAWL_CLICKHOUSE_TLS_CERT and TRAWL_CLICKHOUSE_TLS_KEY"; return 1
    fi
  fi
  install
  configure
  log "clickhouse: starting on $HOST:$HTTP_PORT${HTTPS_PORT:+ (https on $HTTPS_PORT)}"
  nohup clickhouse-server --config-file="$CDIR/config.xml" >"$CDIR/logs/stdout.log" 2>&1 &
  echo $! >"$PIDFILE"
  wait_ready clickhouse "$PIDFILE" clickhouse_ready "$CDIR/logs/stdout.log" "$CDIR/logs/clickhouse-server.err.log"
}

# ClickHouse answers /ping with "Ok." and SELECT version() with a version number.
clickhouse_identity() {
  clickhouse_ready || return 1
  local version
  version=$(curl -s -m 5 "http://$HOST:$HTTP_PORT/?query=SELECT%20version()" 2>/dev/null) || return 1
  [[ "$version" =~ ^[0-9]+\.[0-9]+ ]]
}

clickhouse_ready() { [[ "$(curl -s -m 5 "http://$HOST:$HTTP_PORT/ping" 2>/dev/null)" == "Ok." ]]; }

down() { stop_pid "$PIDFILE" clickhouse; }
status() { print_status clickhouse "$PIDFILE" "$HOST:$HTTP_PORT"; }

"${1:-status}"
