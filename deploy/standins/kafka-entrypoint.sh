#!/bin/bash
# The Kafka stand-in's start: KAFKA_* variables become server.properties as in the official apache/kafka image
# (KAFKA_LOG_DIRS -> log.dirs; `__` is `-`, `___` is `_`), then the data folder is formatted once and the broker runs.
set -euo pipefail
props=/opt/kafka/server.properties
echo "log.dirs=/var/lib/kafka/data" >"$props"
while IFS='=' read -r name value; do
  case $name in KAFKA_HEAP_OPTS | KAFKA_OPTS | KAFKA_JVM_OPTS) continue ;; KAFKA_*) ;; *) continue ;; esac
  key=${name#KAFKA_}; key=${key,,}; key=${key//___/\#}; key=${key//__/-}; key=${key//_/.}; key=${key//\#/_}
  echo "$key=$value" >>"$props"
done < <(env)
cat >/opt/kafka/log4j.properties <<'PROPS'
log4j.rootLogger=WARN, stdout
log4j.logger.kafka.server.KafkaRaftServer=INFO
log4j.logger.kafka.server.BrokerServer=INFO
log4j.appender.stdout=org.apache.log4j.ConsoleAppender
log4j.appender.stdout.layout=org.apache.log4j.PatternLayout
log4j.appender.stdout.layout.ConversionPattern=[%d] %p %m (%c)%n
PROPS
cp=(-Dlog4j.configuration=file:/opt/kafka/log4j.properties -cp "/opt/kafka/libs/*")
if [[ ! -f /var/lib/kafka/data/meta.properties ]]; then
  java "${cp[@]}" kafka.tools.StorageTool format -t "${CLUSTER_ID:-$(java "${cp[@]}" kafka.tools.StorageTool random-uuid | tail -1)}" -c "$props"
fi
# shellcheck disable=SC2086 # word splitting of the options is meant
exec java ${KAFKA_HEAP_OPTS:--Xms256m -Xmx768m} -XX:+UseG1GC -XX:TieredStopAtLevel=1 -Djava.awt.headless=true "${cp[@]}" kafka.Kafka "$props"
