#!/bin/bash
# The ClickHouse stand-in's start: the configuration of scripts/clickhouse.sh listening on every address, with the
# user of CLICKHOUSE_USER/CLICKHOUSE_PASSWORD (the official image's variables; 18.16 has no SQL user management).
set -euo pipefail
d=/etc/clickhouse-standin
mkdir -p "$d" /var/lib/clickhouse/tmp /var/lib/clickhouse/user_files /var/lib/clickhouse/format_schemas
cat >"$d/config.xml" <<XML
<?xml version="1.0"?>
<yandex>
  <logger><level>warning</level><console>1</console></logger>
  <http_port>8123</http_port>
  <tcp_port>9000</tcp_port>
  <listen_host>0.0.0.0</listen_host>
  <max_connections>512</max_connections>
  <keep_alive_timeout>10</keep_alive_timeout>
  <max_concurrent_queries>200</max_concurrent_queries>
  <uncompressed_cache_size>268435456</uncompressed_cache_size>
  <mark_cache_size>268435456</mark_cache_size>
  <path>/var/lib/clickhouse/</path>
  <tmp_path>/var/lib/clickhouse/tmp/</tmp_path>
  <user_files_path>/var/lib/clickhouse/user_files/</user_files_path>
  <format_schema_path>/var/lib/clickhouse/format_schemas/</format_schema_path>
  <users_config>$d/users.xml</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <timezone>UTC</timezone>
  <mlock_executable>false</mlock_executable>
</yandex>
XML
user=${CLICKHOUSE_USER:-default}
password=${CLICKHOUSE_PASSWORD:-}
password=${password//&/&amp;}; password=${password//</&lt;}; password=${password//>/&gt;}
cat >"$d/users.xml" <<XML
<?xml version="1.0"?>
<yandex>
  <profiles><default><max_memory_usage>4000000000</max_memory_usage><load_balancing>random</load_balancing></default></profiles>
  <users>
    <$user>
      <password>$password</password>
      <networks><ip>::/0</ip></networks>
      <profile>default</profile>
      <quota>default</quota>
    </$user>
  </users>
  <quotas><default><interval><duration>3600</duration><queries>0</queries><errors>0</errors><result_rows>0</result_rows><read_rows>0</read_rows><execution_time>0</execution_time></interval></default></quotas>
</yandex>
XML
exec clickhouse-server --config-file="$d/config.xml"
