// The infrastructure of one process, per mode: Kafka + ClickHouse (cluster) or the in-process bus and the on-disk
// store (embedded). Both give the roles the same ports.
import { join, resolve } from "node:path";
import type { Bus, Processor, QueueStat } from "../pipeline/runtime/bus.ts";
import type { Clock } from "../pipeline/runtime/clock.ts";
import { ConfigError, type Config } from "../pipeline/runtime/config.ts";
import { checkDataFormat, DATA_FORMAT } from "../pipeline/runtime/data-format.ts";
import { EmbeddedBus } from "../pipeline/runtime/embedded-bus.ts";
import { TrawlError } from "../pipeline/runtime/errors.ts";
import { createKafka, ensureTopics, KafkaBus, kafkaQueueStats, reachKafka } from "../pipeline/runtime/kafka-bus.ts";
import type { Logger } from "../pipeline/runtime/logger.ts";
import { connectRegistry, registryConnection } from "../pipeline/runtime/registry.ts";
import { retry } from "../pipeline/runtime/retry.ts";
import { StartDeadline } from "../pipeline/runtime/start-wait.ts";
import { startRunner, type RunnerHandle } from "../pipeline/runtime/runner.ts";
import { ClickHouseClient } from "../pipeline/store/clickhouse.ts";
import { ClickHouseCrawlStore } from "../pipeline/store/clickhouse-crawl-store.ts";
import { ClickHousePageCache } from "../pipeline/store/clickhouse-page-cache.ts";
import type { AuthStore } from "../pipeline/store/auth-store.ts";
import { ClickHouseAuthStore } from "../pipeline/store/clickhouse-auth-store.ts";
import type { CrawlStore } from "../pipeline/store/crawl-store.ts";
import { EmbeddedAuthStore } from "../pipeline/store/embedded-auth-store.ts";
import { EmbeddedCrawlStore } from "../pipeline/store/embedded-crawl-store.ts";
import { ReplicaWatch, type ReplicaStatus } from "../pipeline/store/replica-heal.ts";
import { migrate } from "../pipeline/store/migrations.ts";
import { EmbeddedPageCache, type PageCache } from "../pipeline/store/page-cache.ts";
import { raw } from "../pipeline/store/sql.ts";
import { ClickHouseScreenshotStore, EmbeddedScreenshotStore, type ScreenshotStore } from "../pipeline/store/screenshot-store.ts";
import { EmbeddedSnapshotStore, type SnapshotStore } from "../pipeline/store/snapshot-store.ts";
import { ClickHouseSnapshotStore } from "../pipeline/store/clickhouse-snapshot-store.ts";
import { WarcArchive } from "../pipeline/store/warc/warc-archive.ts";
import { EmbeddedMonitorStore, type MonitorStore } from "../pipeline/store/monitor-store.ts";
import { ClickHouseMonitorStore } from "../pipeline/store/clickhouse-monitor-store.ts";
import type { KafkaCompression } from "../pipeline/runtime/kafka-compression.ts";

export interface Infrastructure {
  bus: Bus;
  store: CrawlStore;
  /** Teams, API keys and the credit ledger. */
  auth: AuthStore;
  cache: PageCache;
  /** Stored screenshots (SCREENSHOTS=url). */
  screenshots: ScreenshotStore;
  /** Page snapshots of change tracking and conditional fetches. */
  snapshots: SnapshotStore;
  /** Monitors (scheduled recrawls) and their checks. */
  monitors: MonitorStore;
  /** Web archives (WARC files and CDXJ index) of jobs run with `warc: true`: WARC_DIR, else DATA_DIR/warc. */
  warc: WarcArchive;
  run<T, B>(processor: Processor<T, B>): Promise<RunnerHandle>;
  ready(): Promise<boolean>;
  queueStats(): Promise<QueueStat[]>;
  /** Every processor of this process is running. */
  started?(): void;
  /** Cluster mode: each ClickHouse server of CLICKHOUSE_URL and its state (for /health and /metrics). */
  storeReplicas?(): ReplicaStatus[];
  /** A crash left the embedded logs damaged (torn writes, lost records): running crawls must be resumed. */
  damaged?: boolean;
  close(): Promise<void>;
}

/** The web archives' directory: WARC_DIR (a shared volume in cluster mode), else DATA_DIR/warc. */
export const warcArchive = (config: Config): WarcArchive =>
  new WarcArchive({ root: resolve(config.warcDir || join(config.dataDir, "warc")), maxFileBytes: config.warcMaxFileBytes, idleCloseMs: config.warcIdleCloseMs, thread: config.warcWriterThread, software: "Trawl (https://github.com/trawl)" });

/** The infrastructure `config.mode` asks for; `client` names this process's Kafka client. */
export function openInfrastructure(config: Config, log: Logger, clock: Clock, client: string): Promise<Infrastructure> {
  return config.mode === "embedded" ? embeddedInfrastructure(config, log, clock) : clusterInfrastructure(config, log, client);
}

/** Kafka + ClickHouse: migrations and topics first (waiting for the servers), then a producer. */
async function clusterInfrastructure(config: Config, log: Logger, client: string): Promise<Infrastructure> {
  const ch = new ClickHouseClient({ url: config.clickhouseUrl, user: config.clickhouseUser, password: config.clickhousePassword, database: config.clickhouseDatabase, caFile: config.clickhouseCaFile, cluster: config.clickhouseCluster, requestTimeoutMs: config.clickhouseRequestTimeoutMs, log });
  const patient = { retries: 20, initialMs: 250, maxMs: 3000, retriable: (err: unknown) => !(err instanceof ConfigError) };
  // the start waits INFRA_START_WAIT_S in all for its servers, then stops naming the one it could not reach
  const deadline = new StartDeadline(config.infraStartWaitS * 1000, log);
  // the Kafka and registry settings first (their files are read here): a bad one stops the start before any server is touched
  const kafka = createKafka(config, client, log);
  const registryConn = config.schemaRegistryUrl ? registryConnection(config) : undefined;
  // an untrusted certificate or refused credentials do not go away by waiting: the start stops at once
  const chRetriable = (err: unknown) => patient.retriable(err) && !(err instanceof TrawlError && (err.code === "STORE_TLS_UNTRUSTED" || err.code === "STORE_AUTH_REFUSED"));
  // the deadline bounds reaching each server, not the work after it: migrations ON CLUSTER wait for every replica and
  // can take minutes on a healthy cluster
  await deadline.run({ server: "ClickHouse", variable: "CLICKHOUSE_URL", where: config.clickhouseUrl }, () => ch.query(raw("SELECT 1 AS ok")), { ...patient, retriable: chRetriable });
  // a server of CLICKHOUSE_URL without Trawl's database or tables while another has them (a replica replaced with an
  // empty disk) is healed, from now (the migrations below leave it out) and whenever a check or a request finds one
  const replicas = new ReplicaWatch(ch, log);
  await replicas.check();
  replicas.start();
  const legacyTables = await retry(() => migrate(ch), { ...patient, retriable: chRetriable, onRetry: (err, attempt) => log.warn({ err: (err as Error).message, attempt }, "migrations failed: retrying") });
  // a client of its own with few retries: each attempt fails within seconds with its reason, logged, and the deadline
  // names it (the roles' client retries every connection for about a minute)
  const starting = createKafka(config, client, log, 2);
  await deadline.run({ server: "Kafka", variable: "KAFKA_BROKERS", where: config.kafkaBrokers }, () => reachKafka(starting, config), patient);
  await retry(() => ensureTopics(starting, config, log), { ...patient, onRetry: (err, attempt) => log.warn({ err: (err as Error).message, attempt }, "creating topics failed: retrying") });
  const registry = registryConn
    ? await deadline.run({ server: "the Schema Registry", variable: "SCHEMA_REGISTRY_URL", where: config.schemaRegistryUrl }, () => connectRegistry(registryConn, config.topicPrefix, log),
      { ...patient, retriable: (err) => !(err instanceof TrawlError || err instanceof ConfigError) || (err instanceof TrawlError && err.retriable) })
    : undefined;
  const bus = new KafkaBus(kafka, config.topicPrefix, registry, { lingerMs: config.kafkaLingerMs, compression: config.kafkaCompression as KafkaCompression, publicCompression: config.kafkaPublicCompression as KafkaCompression, log });
  await bus.connect();
  const cache = new ClickHousePageCache(ch, log);
  const warc = warcArchive(config);
  return {
    bus,
    store: new ClickHouseCrawlStore(ch, legacyTables),
    auth: new ClickHouseAuthStore(ch),
    cache,
    screenshots: new ClickHouseScreenshotStore(ch, legacyTables),
    snapshots: new ClickHouseSnapshotStore(ch),
    monitors: new ClickHouseMonitorStore(ch),
    warc,
    run: (processor) => startRunner({ kafka, bus, config, log }, processor),
    ready: async () => (await ch.query(raw("SELECT 1 AS ok"))).length === 1,
    queueStats: () => kafkaQueueStats(kafka, config),
    storeReplicas: () => replicas.replicas(),
    close: async () => {
      await warc.close();
      replicas.stop();
      await cache.close();
      await bus.close();
    },
  };
}

/** No server: the in-process bus and the on-disk store under DATA_DIR. */
async function embeddedInfrastructure(config: Config, log: Logger, clock: Clock): Promise<Infrastructure> {
  const dir = resolve(config.dataDir);
  const format = await checkDataFormat(dir);
  if (format < DATA_FORMAT) log.info({ dataDir: dir, from: format, to: DATA_FORMAT }, "data directory upgraded to the current format (older Trawl versions cannot read it any more)");
  const bus = await EmbeddedBus.open({ partitions: config.embeddedPartitions, dir, log, memoryChars: config.embeddedBusMemoryBytes });
  const store = await EmbeddedCrawlStore.open(dir, clock.now());
  const cache = await EmbeddedPageCache.open(dir, clock.now() - config.cacheMaxAgeMs, log);
  const auth = await EmbeddedAuthStore.open(dir);
  const snapshots = await EmbeddedSnapshotStore.open(dir, log);
  const monitors = await EmbeddedMonitorStore.open(dir);
  const warc = warcArchive(config);
  // a file a killed process left torn is cut to its last whole append now (files of live processes are left alone)
  const cutTails = await warc.repair(Date.now() - 5 * 60_000);
  if (cutTails.length) log.warn({ files: cutTails }, "web archives: torn tails cut (a kill during a write); their pages are written again");
  const damaged = bus.damage.tornBytes + bus.damage.missingOffsets + bus.damage.damagedRecords + store.repairedBytes + store.damagedRecords > 0;
  if (damaged) {
    const found = { ...bus.damage, storeTornBytes: store.repairedBytes, storeDamagedRecords: store.damagedRecords, cacheTornBytes: cache.repairedBytes };
    log.warn(found, "the last run ended in the middle of a write: repaired; running crawls will be resumed");
  }
  log.info({ dataDir: dir }, "embedded mode: no Kafka, no ClickHouse");
  if (config.schemaRegistryUrl) log.warn({ schemaRegistryUrl: config.schemaRegistryUrl }, "SCHEMA_REGISTRY_URL is ignored in embedded mode (no Kafka topics)");
  return {
    bus,
    store,
    auth,
    cache,
    screenshots: new EmbeddedScreenshotStore(dir, async (jobId) => (await store.getCrawl(jobId)) !== null),
    snapshots,
    monitors,
    warc,
    run: async (processor) => bus.consume(processor, log),
    ready: async () => true,
    queueStats: () => bus.queueStats(),
    started: () => bus.trimUnconsumed(),
    damaged,
    close: async () => {
      await warc.close();
      await bus.close();
      await store.close();
      await cache.close();
      await auth.close();
      await snapshots.close();
      await monitors.close();
    },
  };
}
