#!/usr/bin/env bash
# Local Apache Kafka in KRaft mode, from the official jars on Maven Central: one node by default.
# usage: kafka.sh install|up|down|status [NODE]
# Ports: TRAWL_KAFKA_PORT (broker, 19092), TRAWL_KAFKA_CONTROLLER_PORT (KRaft controller, 19093).
# TRAWL_KAFKA_NODES=N (N > 1): N nodes, each broker and controller (an N-voter quorum), node i on TRAWL_KAFKA_PORT + 2(i-1)
# and TRAWL_KAFKA_CONTROLLER_PORT + 2(i-1), under $INFRA_DIR/kafka/node<i>; internal topics and the broker's default
# replication factor min(3, N), min.insync.replicas min(2, N). `up` prints KAFKA_BROKERS=... on standard output;
# up/down/status NODE acts on node NODE only (fault tests stop and restart one broker).
# A secured listener besides (tests of KAFKA_SECURITY_PROTOCOL=SASL_SSL): TRAWL_KAFKA_SASL_SSL_PORT, with
# TRAWL_KAFKA_SSL_KEYSTORE (a PEM file: the broker's unencrypted PKCS#8 key and certificate chain) and
# TRAWL_KAFKA_SCRAM_USERS (`user=password` pairs separated by spaces, SCRAM-SHA-256 and -512, set when the data
# directory is formatted). TRAWL_KAFKA_SSL_PORT: an SSL listener that requires a client certificate signed by the CA
# of TRAWL_KAFKA_SSL_TRUSTSTORE (a PEM file), same keystore. TRAWL_KAFKA_HEAP_OPTS: the JVM heap (default -Xms256m -Xmx768m).
# TRAWL_KAFKA_VERSION: the broker's version (default 4.4.0; a 3.x one such as 3.9.1 logs through log4j 1). Set, it has
# a directory of its own, $TRAWL_INFRA_DIR/kafka-<version>, so that a second broker of another version can run beside.
# TRAWL_KAFKA_PROPS: more server properties (`key=value` pairs separated by spaces), after and over the ones above;
# fault tests shorten leader.imbalance.check.interval.seconds, for one.
# `up` refuses a number of nodes other than the one these scripts run (down, then up, goes from one to the other);
# `down` (no NODE) stops every broker they started here, of every version, whatever the variables; `status` lists each
# with its role and port.
source "$(dirname "$0")/lib.sh"
VERSION="${TRAWL_KAFKA_VERSION:-4.4.0}"
KDIR="$INFRA_DIR/kafka${TRAWL_KAFKA_VERSION:+-$TRAWL_KAFKA_VERSION}"
HOST=127.0.0.1
PORT="${TRAWL_KAFKA_PORT:-19092}"
CPORT="${TRAWL_KAFKA_CONTROLLER_PORT:-19093}"
PIDFILE="$KDIR/kafka.pid"
LIBS="$KDIR/libs"
NODES="${TRAWL_KAFKA_NODES:-1}"
# one node by default; node_env (several nodes) changes these per node
NODE_ID=1
VOTERS="1@$HOST:$CPORT"
INTERNAL_RF=1
INTERNAL_MIN_ISR=1
SPORT="${TRAWL_KAFKA_SASL_SSL_PORT:-}"
TPORT="${TRAWL_KAFKA_SSL_PORT:-}"

# Kafka 3.x logs through log4j 1 (a .properties file), 4.x through log4j2.
log4j1() { [[ "$VERSION" == 3.* ]]; }

install() {
  # .complete names the version installed (empty: 3.9.1, from before the version was recorded)
  if [[ -f "$KDIR/libs/.complete" && "$(cat "$KDIR/libs/.complete")" == "$VERSION" ]]; then return 0; fi
  # a running broker's jars are not replaced under it (it loads classes from them): the next `down` + `up` switches
  # (several nodes: any node still running, e.g. the others while `up NODE` restarts one)
  local f
  for f in "$PIDFILE" "$KDIR"/node*/kafka.pid; do
    if pid_alive "$f"; then log "kafka: running on other jars; Kafka $VERSION is installed at its next start (down, then up)"; return 0; fi
  done
  need_java_maven
  log "kafka: resolving the jars of Kafka $VERSION from Maven Central"
  rm -rf "$KDIR/libs"
  mkdir -p "$KDIR/libs"
  local line=(); log4j1 && line=(-Dkafka.line=3)
  mvn -q -B -f "$ROOT/scripts/kafka/pom.xml" dependency:copy-dependencies -Dkafka.version="$VERSION" "${line[@]}" \
    -DoutputDirectory="$KDIR/libs" -DincludeScope=runtime >"$KDIR/mvn.log" 2>&1 || { cat "$KDIR/mvn.log" >&2; return 1; }
  echo "$VERSION" >"$KDIR/libs/.complete"
}

configure() {
  mkdir -p "$KDIR/data" "$KDIR/logs"
  cat >"$KDIR/server.properties" <<PROPS
process.roles=broker,controller
node.id=$NODE_ID
controller.quorum.voters=$VOTERS
listeners=PLAINTEXT://$HOST:$PORT,CONTROLLER://$HOST:$CPORT${SPORT:+,SASL_SSL://$HOST:$SPORT}${TPORT:+,SSL://$HOST:$TPORT}
advertised.listeners=PLAINTEXT://$HOST:$PORT${SPORT:+,SASL_SSL://$HOST:$SPORT}${TPORT:+,SSL://$HOST:$TPORT}
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT${SPORT:+,SASL_SSL:SASL_SSL}${TPORT:+,SSL:SSL}
log.dirs=$KDIR/data
num.partitions=1
auto.create.topics.enable=false
offsets.topic.replication.factor=$INTERNAL_RF
offsets.topic.num.partitions=12
transaction.state.log.replication.factor=$INTERNAL_RF
transaction.state.log.min.isr=$INTERNAL_MIN_ISR
${EXTRA_PROPS:-}
group.initial.rebalance.delay.ms=0
# the consumer group protocol (KIP-848, Trawl's default on 4.x): the broker sets the members' session and heartbeat.
# As short as KAFKA_SESSION_TIMEOUT_MS's default under the classic protocol (10 s, heartbeats every second), so that a
# replica killed with -9 gives its partitions up in seconds, not the broker's default 45 s
group.consumer.min.session.timeout.ms=6000
group.consumer.session.timeout.ms=10000
group.consumer.min.heartbeat.interval.ms=1000
group.consumer.heartbeat.interval.ms=1000
message.max.bytes=16777216
replica.fetch.max.bytes=16777216
log.retention.hours=48
log.segment.bytes=67108864
delete.topic.enable=true
# the log cleaner (compacted __consumer_offsets) allocates its dedupe buffer in one piece at start: Kafka's 128 MB did
# not fit a test broker's 256 MB heap once ("OutOfMemoryError: Java heap space" in SkimpyOffsetMap, the broker died)
log.cleaner.dedupe.buffer.size=16777216
${TRAWL_KAFKA_PROPS:+$(tr ' ' '\n' <<<"$TRAWL_KAFKA_PROPS")}
PROPS
  if [[ -n "$SPORT" ]]; then
    cat >>"$KDIR/server.properties" <<PROPS
sasl.enabled.mechanisms=SCRAM-SHA-256,SCRAM-SHA-512
listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
PROPS
  fi
  if [[ -n "$TPORT" ]]; then
    cat >>"$KDIR/server.properties" <<PROPS
listener.name.ssl.ssl.client.auth=required
ssl.truststore.type=PEM
ssl.truststore.location=${TRAWL_KAFKA_SSL_TRUSTSTORE:?TRAWL_KAFKA_SSL_PORT needs TRAWL_KAFKA_SSL_TRUSTSTORE}
PROPS
  fi
  if [[ -n "$SPORT$TPORT" ]]; then
    cat >>"$KDIR/server.properties" <<PROPS
ssl.keystore.type=PEM
ssl.keystore.location=${TRAWL_KAFKA_SSL_KEYSTORE:?a TLS listener needs TRAWL_KAFKA_SSL_KEYSTORE}
PROPS
  fi
  if log4j1; then
    LOGCONF=(-Dlog4j.configuration="file:$KDIR/log4j.properties")
    cat >"$KDIR/log4j.properties" <<PROPS
log4j.rootLogger=WARN, file
log4j.logger.kafka.server.KafkaServer=INFO
log4j.logger.kafka.server.KafkaRaftServer=INFO
log4j.logger.kafka.server.BrokerServer=INFO
log4j.appender.file=org.apache.log4j.RollingFileAppender
log4j.appender.file.File=$KDIR/logs/server.log
log4j.appender.file.MaxFileSize=50MB
log4j.appender.file.MaxBackupIndex=2
log4j.appender.file.layout=org.apache.log4j.PatternLayout
log4j.appender.file.layout.ConversionPattern=[%d] %p %m (%c)%n
PROPS
  else
    LOGCONF=(-Dlog4j2.configurationFile="$KDIR/log4j2.properties")
    cat >"$KDIR/log4j2.properties" <<PROPS
appender.file.type=RollingFile
appender.file.name=file
appender.file.fileName=$KDIR/logs/server.log
appender.file.filePattern=$KDIR/logs/server.log.%i
appender.file.layout.type=PatternLayout
appender.file.layout.pattern=[%d] %p %m (%c)%n
appender.file.policies.type=Policies
appender.file.policies.size.type=SizeBasedTriggeringPolicy
appender.file.policies.size.size=50MB
appender.file.strategy.type=DefaultRolloverStrategy
appender.file.strategy.max=2
rootLogger.level=WARN
rootLogger.appenderRef.file.ref=file
logger.raft.name=kafka.server.KafkaRaftServer
logger.raft.level=INFO
logger.broker.name=kafka.server.BrokerServer
logger.broker.level=INFO
PROPS
  fi
  if [[ ! -f "$KDIR/data/meta.properties" ]]; then
    local id
    id=${CLUSTER_ID:-$(java -cp "$LIBS/*" kafka.tools.StorageTool random-uuid 2>/dev/null | tail -1)}
    local scram=() pair
    for pair in ${TRAWL_KAFKA_SCRAM_USERS:-}; do
      scram+=(--add-scram "SCRAM-SHA-256=[name=${pair%%=*},password=${pair#*=}]" --add-scram "SCRAM-SHA-512=[name=${pair%%=*},password=${pair#*=}]")
    done
    java "${LOGCONF[@]}" -cp "$LIBS/*" kafka.tools.StorageTool format \
      -t "$id" -c "$KDIR/server.properties" "${scram[@]}" >"$KDIR/logs/format.log" 2>&1 || { cat "$KDIR/logs/format.log" >&2; return 1; }
  fi
}

# running_nodes DIR: how many nodes the brokers these scripts started in DIR run as now (0: none runs).
running_nodes() {
  local dir=$1
  if pid_alive "$dir/kafka.pid"; then echo 1; return; fi
  if (($(alive_count "$dir"/node*/kafka.pid) == 0)); then echo 0; return; fi
  if [[ -f "$dir/layout" ]]; then cat "$dir/layout"; else find "$dir" -maxdepth 1 -name 'node*' -type d | wc -l; fi
}

up() {
  local have; have=$(running_nodes "$BASE_KDIR")
  if ((have > 0 && have != NODES)); then
    log "kafka: TRAWL_KAFKA_NODES=$NODES asks for $NODES node(s), but these scripts run $have in $BASE_KDIR: not mixing them"
    log "kafka: to go from one to the other: npm run infra -- down kafka (stops every broker these scripts started, whatever the variables), then TRAWL_KAFKA_NODES=$NODES npm run infra -- up kafka; the new brokers start with empty topics (Trawl creates its own at start)"
    return 1
  fi
  mkdir -p "$BASE_KDIR"
  echo "$NODES" >"$BASE_KDIR/layout"
  if ((NODES > 1)); then up_nodes "$@"; return; fi
  if pid_alive "$PIDFILE"; then log "kafka: already running on $HOST:$PORT"; return 0; fi
  if port_busy "$HOST" "$PORT"; then adopt_or_refuse kafka "$HOST:$PORT" TRAWL_KAFKA_PORT kafka_identity; return; fi
  need_free kafka "$HOST" "$CPORT" TRAWL_KAFKA_CONTROLLER_PORT
  install
  configure
  launch
  wait_ready kafka "$PIDFILE" kafka_ready "$KDIR/logs/stdout.log" "$KDIR/logs/server.log"
}

launch() {
  log "kafka: starting Kafka $VERSION on $HOST:$PORT"
  # TRAWL_KAFKA_JVM_OPTS (default -XX:TieredStopAtLevel=1): the JIT stops at C1. C2 compiling the broker's hot
  # paths took about half of its CPU over the first crawls after a start on two cores (bench/README.md, issue 19);
  # a broker that runs for days on more cores may want C2 back: set TRAWL_KAFKA_JVM_OPTS=" ".
  # shellcheck disable=SC2086 # word splitting of the options is meant
  nohup java ${TRAWL_KAFKA_HEAP_OPTS:--Xms256m -Xmx768m} -XX:+UseG1GC ${TRAWL_KAFKA_JVM_OPTS:--XX:TieredStopAtLevel=1} -Djava.awt.headless=true \
    "${LOGCONF[@]}" -cp "$LIBS/*" kafka.Kafka "$KDIR/server.properties" \
    >"$KDIR/logs/stdout.log" 2>&1 &
  echo $! >"$PIDFILE"
}

# A Kafka broker answers a metadata request and names itself at this address.
kafka_identity() {
  need_kcat || return 1
  local out
  out=$(kcat -L -b "$HOST:$PORT" -m 5 2>/dev/null) || return 1
  grep -q "broker [0-9]* at $HOST:$PORT" <<<"$out"
}

kafka_ready() { grep -q "Kafka Server started" "$KDIR/logs/server.log" 2>/dev/null && port_busy "$HOST" "$PORT"; }

# found_brokers: "NAME|ROLE|PIDFILE|PORT" of every broker these scripts configured under $INFRA_DIR, of every version.
found_brokers() {
  local d n version
  for d in "$INFRA_DIR"/kafka "$INFRA_DIR"/kafka-*; do
    [[ -d $d ]] || continue
    version=${d##*/kafka}; version=${version#-}
    if [[ -f "$d/server.properties" ]]; then
      echo "kafka${version:+ $version}|broker and controller, one node|$d/kafka.pid|$(broker_port "$d/server.properties")"
    fi
    for n in "$d"/node*; do
      [[ -f "$n/server.properties" ]] || continue
      echo "kafka${version:+ $version} node ${n##*/node}|broker and controller, node ${n##*/node} of $(find "$d" -maxdepth 1 -name 'node*' -type d | wc -l)|$n/kafka.pid|$(broker_port "$n/server.properties")"
    done
  done
}

# broker_port FILE: the PLAINTEXT port of a server.properties these scripts wrote.
broker_port() { sed -n 's/^listeners=.*PLAINTEXT:\/\/[^:]*:\([0-9]*\).*/\1/p' "$1" 2>/dev/null | head -1 || true; }

down() {
  # one node of several (fault tests)
  if [[ -n ${1:-} ]]; then each_node "$1" term_node; each_node "$1" stop_node; return; fi
  local name role pidfile port any=0
  # every node is told first: the last one stopped alone has no quorum left and waits out its shutdown (30 s, then -9)
  while IFS='|' read -r name role pidfile port; do
    if pid_alive "$pidfile"; then kill "$(cat "$pidfile")" 2>/dev/null || true; fi
  done < <(found_brokers)
  while IFS='|' read -r name role pidfile port; do
    any=1
    stop_pid "$pidfile" "$name"
  done < <(found_brokers)
  ((any)) || log "kafka: not running (started by us)"
  rm -f "$INFRA_DIR"/kafka/layout "$INFRA_DIR"/kafka-*/layout
}
status() {
  if [[ -n ${1:-} ]]; then each_node "$1" status_node; return; fi
  local name role pidfile port any=0
  while IFS='|' read -r name role pidfile port; do
    any=1
    print_role "$name" "$role" "$pidfile" "$HOST:$port"
  done < <(found_brokers)
  if ((!any)); then
    if ((NODES > 1)); then each_node "" status_node; else print_role kafka "broker and controller, one node" "$PIDFILE" "$HOST:$PORT"; fi
  fi
}

# ---- several nodes (TRAWL_KAFKA_NODES > 1) ----
BASE_KDIR="$KDIR" BASE_PORT="$PORT" BASE_CPORT="$CPORT"

# node_env I: the variables of node I (run in a subshell).
node_env() {
  local i=$1 j
  NODE_ID=$i
  KDIR="$BASE_KDIR/node$i"
  PORT=$((BASE_PORT + 2 * (i - 1)))
  CPORT=$((BASE_CPORT + 2 * (i - 1)))
  PIDFILE="$KDIR/kafka.pid"
  VOTERS=""
  for ((j = 1; j <= NODES; j++)); do VOTERS+="${VOTERS:+,}$j@$HOST:$((BASE_CPORT + 2 * (j - 1)))"; done
  INTERNAL_RF=$((NODES < 3 ? NODES : 3))
  INTERNAL_MIN_ISR=$((NODES < 3 ? NODES - 1 : 2))
  # the topics that name no factor (Trawl names its own: KAFKA_REPLICATION_FACTOR) get a replicated default
  EXTRA_PROPS="default.replication.factor=$INTERNAL_RF
min.insync.replicas=$INTERNAL_MIN_ISR"
  # three JVMs share the machine: a smaller heap each unless one is asked for
  TRAWL_KAFKA_HEAP_OPTS="${TRAWL_KAFKA_HEAP_OPTS:--Xms128m -Xmx512m}"
}

# each_node [I] FN: FN in the environment of node I, or of every node in turn.
each_node() {
  local only=$1 fn=$2 i
  for ((i = 1; i <= NODES; i++)); do
    [[ -z $only || $only == "$i" ]] || continue
    (node_env "$i"; "$fn") || return
  done
}

brokers_list() {
  local i out=""
  for ((i = 1; i <= NODES; i++)); do out+="${out:+,}$HOST:$((BASE_PORT + 2 * (i - 1)))"; done
  echo "$out"
}

start_node() {
  if pid_alive "$PIDFILE"; then log "kafka node $NODE_ID: already running on $HOST:$PORT"; return 0; fi
  need_free "kafka node $NODE_ID" "$HOST" "$PORT" "TRAWL_KAFKA_PORT (node $NODE_ID: TRAWL_KAFKA_PORT + $((2 * (NODE_ID - 1))))" || return
  need_free "kafka node $NODE_ID" "$HOST" "$CPORT" "TRAWL_KAFKA_CONTROLLER_PORT (node $NODE_ID: + $((2 * (NODE_ID - 1))))" || return
  configure
  launch
}
wait_node() { wait_ready "kafka node $NODE_ID" "$PIDFILE" kafka_ready "$KDIR/logs/stdout.log" "$KDIR/logs/server.log"; }
term_node() { if pid_alive "$PIDFILE"; then kill "$(cat "$PIDFILE")" 2>/dev/null || true; fi; }
stop_node() { stop_pid "$PIDFILE" "kafka node $NODE_ID"; }
status_node() { print_status "kafka node $NODE_ID" "$PIDFILE" "$HOST:$PORT"; }

# Every node is started before any is waited for: a node is ready only once a majority of the quorum runs.
up_nodes() {
  install
  [[ -f "$BASE_KDIR/cluster.id" ]] || java -cp "$LIBS/*" kafka.tools.StorageTool random-uuid 2>/dev/null | tail -1 >"$BASE_KDIR/cluster.id"
  CLUSTER_ID=$(cat "$BASE_KDIR/cluster.id")
  each_node "${1:-}" start_node
  each_node "${1:-}" wait_node
  log "kafka: $NODES nodes on $HOST; KAFKA_BROKERS=$(brokers_list)"
  echo "KAFKA_BROKERS=$(brokers_list)"
}

cmd="${1:-status}"; shift || true
"$cmd" "$@"
