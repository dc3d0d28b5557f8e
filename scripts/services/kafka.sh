#!/usr/bin/env bash
# A real Apache Kafka broker in KRaft mode, from the official artifacts on Maven Central, on loopback.
source "$(dirname "$0")/lib.sh"

KAFKA_LIBS="$CACHE_DIR/kafka-$KAFKA_VERSION/libs"
KAFKA_DIR="$WEIR_HOME/kafka"
CONF="$KAFKA_DIR/server.properties"

fetch_artifacts() {
  [ -f "$KAFKA_LIBS/.complete" ] && return 0
  log "fetching Apache Kafka $KAFKA_VERSION from Maven Central (once; cached in $KAFKA_LIBS)"
  local work; work="$(mktemp -d)"
  sed "s/@KAFKA_VERSION@/$KAFKA_VERSION/" "$ROOT/scripts/services/kafka-pom.xml" > "$work/pom.xml"
  rm -rf "$KAFKA_LIBS"; mkdir -p "$KAFKA_LIBS"
  mvn -q -B -f "$work/pom.xml" dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$KAFKA_LIBS" \
    > "$LOG_DIR/kafka-fetch.log" 2>&1 || { log "Maven fetch failed: see $LOG_DIR/kafka-fetch.log"; exit 1; }
  touch "$KAFKA_LIBS/.complete"
  rm -rf "$work"
}

write_config() {
  mkdir -p "$KAFKA_DIR/data"
  cat > "$1" <<CONF
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$KAFKA_CONTROLLER_PORT
listeners=PLAINTEXT://127.0.0.1:$KAFKA_PORT,CONTROLLER://127.0.0.1:$KAFKA_CONTROLLER_PORT,TENANT://127.0.0.1:$KAFKA_TENANT_PORT
advertised.listeners=PLAINTEXT://127.0.0.1:$KAFKA_PORT,TENANT://127.0.0.1:$KAFKA_TENANT_PORT
controller.listener.names=CONTROLLER
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,TENANT:SASL_PLAINTEXT
inter.broker.listener.name=PLAINTEXT
# Two doors. PLAINTEXT is the platform's (control plane, workers): its clients are trusted and act as super users,
# so in production it sits on a private network or takes mTLS. TENANT is the job hosts': each authenticates as its
# tenant's SCRAM user, which the workers create, and its ACLs reach only that tenant's topics, groups and
# transactional ids (apps/worker/src/kafka-access). Job hosts can open no connection to the PLAINTEXT door.
sasl.enabled.mechanisms=SCRAM-SHA-256
listener.name.tenant.sasl.enabled.mechanisms=SCRAM-SHA-256
listener.name.tenant.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer
super.users=User:ANONYMOUS
allow.everyone.if.no.acl.found=false
log.dirs=$KAFKA_DIR/data
num.partitions=1
auto.create.topics.enable=false
offsets.topic.replication.factor=1
offsets.topic.num.partitions=8
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=8
group.initial.rebalance.delay.ms=0
log.retention.hours=24
log.segment.bytes=67108864
CONF
  cat > "$KAFKA_DIR/log4j.properties" <<'CONF'
log4j.rootLogger=WARN, stdout
log4j.appender.stdout=org.apache.log4j.ConsoleAppender
log4j.appender.stdout.layout=org.apache.log4j.PatternLayout
log4j.appender.stdout.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.kafka.server.KafkaRaftServer=INFO
log4j.logger.kafka.server.BrokerServer=INFO
CONF
}

kafka_java() { java -cp "$KAFKA_LIBS/*" -Dlog4j.configuration="file:$KAFKA_DIR/log4j.properties" "$@"; }

# The broker answers once it has registered and serves metadata; an open port alone is not enough.
broker_ready() { port_open "$KAFKA_PORT" && grep -q "Kafka Server started" "$LOG_DIR/kafka.log" 2>/dev/null; }

# A broker started with another configuration (an older checkout's) is restarted with this one: its data stays.
write_config "$CONF.wanted"
if is_running kafka; then
  if cmp -s "$CONF.wanted" "$CONF"; then
    rm -f "$CONF.wanted"
    wait_for 90 "Kafka" broker_ready
    exit 0
  fi
  pid="$(cat "$RUN_DIR/kafka.pid")"
  log "Kafka runs with an older configuration; restarting it (pid $pid)"
  kill "$pid"
  for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
  kill -0 "$pid" 2>/dev/null && kill -9 "$pid"
  rm -f "$RUN_DIR/kafka.pid"
fi
if port_open "$KAFKA_PORT"; then
  log "port $KAFKA_PORT is taken by a process this project did not start; set WEIR_KAFKA_PORT"
  exit 1
fi
fetch_artifacts
mv "$CONF.wanted" "$CONF"
if [ ! -f "$KAFKA_DIR/data/meta.properties" ]; then
  kafka_java kafka.tools.StorageTool format -t "$(kafka_java kafka.tools.StorageTool random-uuid)" -c "$CONF" \
    > "$LOG_DIR/kafka-format.log" 2>&1
fi
log "starting Kafka $KAFKA_VERSION on 127.0.0.1:$KAFKA_PORT"
: > "$LOG_DIR/kafka.log"
nohup java -Xms256m -Xmx1g -XX:+UseG1GC -cp "$KAFKA_LIBS/*" -Dlog4j.configuration="file:$KAFKA_DIR/log4j.properties" \
  kafka.Kafka "$CONF" >> "$LOG_DIR/kafka.log" 2>&1 < /dev/null &
echo $! > "$RUN_DIR/kafka.pid"
wait_for 90 "Kafka" broker_ready || { tail -20 "$LOG_DIR/kafka.log" >&2; exit 1; }
log "Kafka is up"
