// One declarative table of every configuration variable, parsed once at start.
// Nothing below `main` reads process.env; a bad value stops the start with a message naming the variable.

type Kind = "string" | "int" | "bool" | "url" | "s3Url" | "urlList" | "enum" | "fraction" | "optionalFraction" | "msList" | "hostMap" | "proxyUrl";

interface Var<K extends Kind = Kind> {
  env: string;
  kind: K;
  default: string;
  description: string;
  min?: number;
  max?: number;
  values?: readonly string[];
  roles: string;
  /** A key or password: the Helm chart puts it in a Secret, not the ConfigMap. */
  secret?: boolean;
  /** Other names of the variable (Firecrawl's); set together, they must mean the same value. */
  aliases?: readonly string[];
}

const v = <K extends Kind>(x: Var<K>): Var<K> => x;

/** Every variable Trawl reads. The table of docs/configuration.md is rendered from this (npm run docs:config). */
export const configVars = {
  mode: v({ env: "TRAWL_MODE", kind: "enum", default: "cluster", values: ["cluster", "embedded"], description: "cluster: Kafka + ClickHouse; embedded: every role in one process with an in-process bus and an on-disk store (no server needed). `npm start` and `--embedded` choose embedded. `trawl keys` and `trawl teams` use the embedded store (as `npm start`) unless this is set or `--cluster` is given.", roles: "all" }),
  dataDir: v({ env: "DATA_DIR", kind: "string", default: ".trawl-data", description: "Where the embedded mode keeps its bus logs and store (survives restarts).", roles: "all (embedded)" }),
  heapGrowthPercent: v({ env: "HEAP_GROWTH_PERCENT", kind: "int", default: "75", min: 0, max: 1000, description: "How far V8 lets the heap grow past what survived the last full GC before the next one (V8's --heap-growing-percent, set at start). With its own policy (0) the heap of a long crawl grew to ~3x its live data and RSS doubled from 10 % to 100 % of a 100,000-page crawl; 75 keeps it flat within 20 % for a few percent more GC.", roles: "all" }),
  v8EfficiencyMode: v({ env: "V8_EFFICIENCY_MODE", kind: "bool", default: "true", description: "V8's efficiency mode for compiling (set at start, every thread of the process): a function stays on V8's mid-tier compiler (Maglev) until it has been called 15,000 times instead of going to TurboFan as soon as it runs hot. The first crawl after start then spends ~20 % less CPU per page on documentation sites (no TurboFan compiles of per-page code it would run only a few thousand times). Ends after V8_EFFICIENCY_CPU_S. false: V8's default tiering.", roles: "all" }),
  v8EfficiencyCpuS: v({ env: "V8_EFFICIENCY_CPU_S", kind: "int", default: "10", min: 0, max: 86400, description: "With V8_EFFICIENCY_MODE: the process's CPU seconds (every thread, counted from start) after which V8's own tiering takes over, so that code called once per batch, which never reaches 15,000 calls, is still TurboFan-compiled in a long crawl. 10 covers the first crawls of a few thousand pages (the manual's 1,169 pages take ~2.5 s). 0: efficiency mode for the life of the process.", roles: "all" }),
  embeddedPartitions: v({ env: "EMBEDDED_PARTITIONS", kind: "int", default: "12", min: 1, max: 256, description: "Partitions of each in-process topic in embedded mode.", roles: "all (embedded)" }),
  embeddedBusMemoryBytes: v({ env: "EMBEDDED_BUS_MEMORY_BYTES", kind: "int", default: "16777216", min: 0, max: 68719476736, description: "Embedded mode: message values (characters, about bytes) the in-process bus keeps in memory across its topics. A message produced while they are spent (a queue of discovered URLs millions long) stays only in its partition's log under DATA_DIR, and its consumer reads it back from there (~20 bytes of memory a message instead of ~1 KB). The topics that carry page bodies are bounded in memory by other means and do not count. 0: every such message is read back from disk.", roles: "all (embedded)" }),
  host: v({ env: "HOST", kind: "string", default: "127.0.0.1", description: "Address the API binds to (use 0.0.0.0 in a container).", roles: "api" }),
  port: v({ env: "PORT", kind: "int", default: "3002", min: 0, max: 65535, description: "Port of the HTTP and WebSocket API.", roles: "api" }),
  useDbAuthentication: v({ env: "USE_DB_AUTHENTICATION", kind: "bool", default: "false", description: "true: every /v2 request and WebSocket needs an API key of a team (`npx trawl keys create`), with the team's credits and the key's rate limit; keys live in Trawl's own store. false: no authentication (a warning is logged at start).", roles: "api" }),
  authCacheTtlMs: v({ env: "AUTH_CACHE_TTL_MS", kind: "int", default: "5000", min: 0, max: 300000, description: "How long an API process trusts a verified key and a team's balance: a revoked key stops working within this time in every replica. Also how long the frontier role trusts a team's concurrency limit.", roles: "api, frontier" }),
  authFailureLimit: v({ env: "AUTH_FAILURE_LIMIT", kind: "int", default: "20", min: 0, max: 1000000, description: "Refused API keys (or other credentials) one client address may present per AUTH_FAILURE_WINDOW_MS; after that its requests get 429 with Retry-After before any key is hashed (a key this process verified before still works). Counted per API process; IPv6 per /64. Behind a reverse proxy set TRUST_PROXY (else every client is the proxy's address). 0: no limit.", roles: "api" }),
  authFailureWindowMs: v({ env: "AUTH_FAILURE_WINDOW_MS", kind: "int", default: "60000", min: 1000, max: 86400000, description: "The window of AUTH_FAILURE_LIMIT, from an address's first refused key.", roles: "api" }),
  authHashConcurrency: v({ env: "AUTH_HASH_CONCURRENCY", kind: "int", default: "1", min: 1, max: 64, description: "API keys hashed at once per API process (scrypt, ~50 ms of a core each, on the thread pool that file reads and DNS share); more wait, and past 64 waiting per slot a request gets 429 with Retry-After. A key verified once is not hashed again while it is used.", roles: "api" }),
  creditBudgetPerPage: v({ env: "CREDIT_BUDGET_PER_PAGE", kind: "int", default: "10", min: 1, max: 100000, description: "Authentication on: a crawl's credit budget is the team's credits left when it starts, up to this many per page of its `limit`; the budget is held from the team's other jobs while the crawl runs, and a PDF is parsed only up to the pages the budget still pays for. A batch scrape's likewise, per URL; URLs appended to it reserve up to this many each (at least 1) and raise its budget by them.", roles: "api" }),
  teamMaxConcurrency: v({ env: "TEAM_MAX_CONCURRENCY", kind: "int", default: "0", min: 0, max: 100000, description: "Jobs (crawls, batch scrapes) one team runs at once, across all of them; more wait in order, status `scraping`, and start as slots free. A team's own `--concurrency` overrides it; with authentication off it applies to the one anonymous team. 0: no limit.", roles: "frontier" }),
  allowUnauthenticatedPublicHost: v({ env: "ALLOW_UNAUTHENTICATED_PUBLIC_HOST", kind: "bool", default: "false", description: "Let the API listen on a non-loopback HOST with USE_DB_AUTHENTICATION=false (anyone who reaches the port can then list, read and cancel every crawl).", roles: "api" }),
  adminKey: v({ env: "BULL_AUTH_KEY", kind: "string", default: "CHANGEME", description: "Access key of the queue admin UI at /admin/<key>/queues (and the key admin routes). When HOST is not a loopback address the start is refused unless it has at least 16 URL-safe characters, 8 distinct, and is not a default (CHANGEME). Never logged.", roles: "api", secret: true }),
  corsAllowedOrigins: v({ env: "CORS_ALLOWED_ORIGINS", kind: "string", default: "", description: "Origins allowed to call the API from a browser (comma-separated, e.g. `https://app.example.com`; `*` for any). Empty: no CORS headers at all.", roles: "api" }),
  trustProxy: v({ env: "TRUST_PROXY", kind: "bool", default: "false", aliases: ["EXPRESS_TRUST_PROXY"], description: "Honour X-Forwarded-Proto/-Host when building `url` and `next`, and take the last X-Forwarded-For address as the client's (AUTH_FAILURE_LIMIT).", roles: "api" }),
  apiAcceptSockets: v({ env: "API_ACCEPT_SOCKETS", kind: "int", default: "8", min: 1, max: 64, description: "Listening sockets of the API port (SO_REUSEPORT, Linux; elsewhere always 1). The event loop accepts one new connection per socket and turn, so while crawl work keeps the loop busy a burst of new connections waits one turn each on a single socket; the kernel spreads them over these. The port is checked free first (a second process on it fails to start).", roles: "api" }),
  monitorMaxPerTeam: v({ env: "MONITOR_MAX_PER_TEAM", kind: "int", default: "25", min: 0, max: 100000, description: "Monitors (scheduled recrawls, /v2/monitor) one team may have (active or paused); creating one more answers 403. 0: none allowed.", roles: "api" }),
  monitorMinIntervalMs: v({ env: "MONITOR_MIN_INTERVAL_MS", kind: "int", default: "300000", min: 1000, max: 86400000, description: "Shortest time between two runs of a monitor (Firecrawl's is 5 minutes): a schedule whose ticks come closer is refused with a 400.", roles: "api" }),
  monitorPollMs: v({ env: "MONITOR_POLL_MS", kind: "int", default: "5000", min: 100, max: 600000, description: "How often each API process looks for monitors whose tick is due (a run starts at most this long after its tick). Every API replica looks; a tick's run has a fixed id, so it starts once.", roles: "api" }),
  statusCacheMs: v({ env: "STATUS_CACHE_MS", kind: "int", default: "250", min: 0, max: 10000, description: "GET /v2/crawl/:id (and batch) answers are shared by the readers of one job in each API process: one store read per page of results every this many ms, however many readers, an older answer served while the next is read (a reader sees the job as of at most this plus one read ago; 0: off). A job's answers are dropped at once when it is cancelled or ends.", roles: "api" }),
  parseMaxBytes: v({ env: "PARSE_MAX_BYTES", kind: "int", default: "52428800", min: 1024, max: 209715200, description: "Largest file POST /v2/parse accepts (50 MB, Firecrawl's limit); a larger upload is refused with 413 before it is read whole.", roles: "api" }),
  parseReadTimeoutMs: v({ env: "PARSE_READ_TIMEOUT_MS", kind: "int", default: "120000", min: 1000, max: 3600000, description: "How long POST /v2/parse waits for an upload's whole body (2 min: a 50 MB file at ~420 KB/s); a slower one is refused with 408 UPLOAD_TIMEOUT and its connection closed, so that clients sending a byte at a time cannot hold the PARSE_MAX_CONCURRENT upload slots.", roles: "api" }),
  parseMaxConcurrent: v({ env: "PARSE_MAX_CONCURRENT", kind: "int", default: "2", min: 1, max: 256, description: "Uploads POST /v2/parse holds at once per API process (read, parsed and converted); one more is refused at once with 503 PARSE_BUSY and Retry-After, before its body is read. Bounds the memory of uploads: each one of PARSE_MAX_BYTES costs a few times its size while it is held.", roles: "api" }),
  statusChunkMaxBytes: v({ env: "STATUS_CHUNK_MAX_BYTES", kind: "int", default: "10485760", min: 1024, max: 104857600, description: "Cap of the JSON of `data` in one GET /v2/crawl/:id response (10 MB).", roles: "api" }),
  defaultCrawlLimit: v({ env: "DEFAULT_CRAWL_LIMIT", kind: "int", default: "10000", min: 1, max: 10000000, description: "`limit` of a crawl that does not set one.", roles: "api" }),
  crawlMaxPages: v({ env: "CRAWL_MAX_PAGES", kind: "int", default: "100000000", min: 1, max: 1000000000, description: "Largest `limit` of a crawl (and most URLs in one batch scrape, appends included) this server accepts; a larger one is refused with 400 naming it. A crawl with no `limit` gets DEFAULT_CRAWL_LIMIT, at most this. The frontier keeps ~16 bytes of RAM per URL a crawl has seen (100,000,000 URLs: ~1.6 GB).", roles: "api" }),
  allowPrivateCrawlTargets: v({ env: "ALLOW_PRIVATE_CRAWL_TARGETS", kind: "bool", default: "false", description: "Allow crawling loopback, private, link-local, unique-local and other non-public addresses (IPv4-mapped, NAT64 and 6to4 IPv6 forms judged by their IPv4 address; checked on the address connected to).", roles: "api, fetch-render" }),
  kafkaBrokers: v({ env: "KAFKA_BROKERS", kind: "string", default: "127.0.0.1:19092", description: "Comma-separated Kafka bootstrap brokers.", roles: "all" }),
  kafkaClientId: v({ env: "KAFKA_CLIENT_ID", kind: "string", default: "trawl", description: "Kafka client id (the role name is appended).", roles: "all" }),
  topicPrefix: v({ env: "KAFKA_TOPIC_PREFIX", kind: "string", default: "trawl.", description: "Prefix of every topic name.", roles: "all" }),
  topicPartitions: v({ env: "KAFKA_PARTITIONS", kind: "int", default: "4", min: 1, max: 1000, description: "Partitions of each topic created at start (an existing topic keeps its own): the most replicas of a role that get work. Each partition's messages are fetched, handled, produced onward and committed as a batch of their own, so more partitions than replicas cost CPU per page: one process crawling the PostgreSQL manual on Kafka ran ~20 % faster with 4 than with 12 (bench/README.md). Set it to the replicas you plan per role (the Helm chart: 12).", roles: "all" }),
  kafkaReplicationFactor: v({ env: "KAFKA_REPLICATION_FACTOR", kind: "int", default: "0", min: 0, max: 32, description: "Replicas of each topic Trawl creates. 0: three, or as many as the cluster has brokers when fewer. A factor larger than the cluster stops the start; 1 on a cluster of three or more brokers, or an existing topic with fewer replicas than asked, is logged as a warning (Trawl never changes an existing topic).", roles: "all (cluster)" }),
  kafkaMinInsyncReplicas: v({ env: "KAFKA_MIN_INSYNC_REPLICAS", kind: "int", default: "0", min: 0, max: 32, description: "min.insync.replicas of each topic Trawl creates: a produce (acks=all) succeeds only once this many replicas have the records. 0: 2 with three or more replicas, else 1. More than KAFKA_REPLICATION_FACTOR stops the start.", roles: "all (cluster)" }),
  infraStartWaitS: v({ env: "INFRA_START_WAIT_S", kind: "int", default: "120", min: 5, max: 3600, description: "How long a start waits in all for ClickHouse, Kafka and the Schema Registry to answer (they may be starting beside it) before it stops with INFRA_UNREACHABLE, naming the variable (CLICKHOUSE_URL, KAFKA_BROKERS, SCHEMA_REGISTRY_URL) of the server it could not reach. It bounds reaching them, not the work after (migrations ON CLUSTER may take minutes). A refused password or an untrusted certificate stops it at once.", roles: "all (cluster)" }),
  kafkaGroupProtocol: v({ env: "KAFKA_GROUP_PROTOCOL", kind: "enum", default: "auto", values: ["auto", "classic", "consumer"], description: "Consumer group protocol of the stages. consumer: the broker assigns partitions incrementally (KIP-848; a replica joining or leaving moves only the partitions it takes or gives, the others go on); classic: JoinGroup/SyncGroup (every member stops at each rebalance). auto: consumer when the broker offers it (ConsumerGroupHeartbeat v1, Kafka 4.0 on), else classic (Kafka 3.9).", roles: "all (cluster)" }),
  kafkaSessionTimeoutMs: v({ env: "KAFKA_SESSION_TIMEOUT_MS", kind: "int", default: "10000", min: 6000, max: 300000, description: "Consumer group session timeout of the classic group protocol (KAFKA_GROUP_PROTOCOL): how long a crashed replica keeps its partitions before the others take them over (consumers heartbeat every tenth of it, at least every second). Under the consumer protocol the broker sets it (group.consumer.session.timeout.ms, 45 s unless configured; scripts/kafka.sh sets 10 s). Short, so that a broker loss (its group coordinator moves) stalls the stages for seconds, not a minute.", roles: "all (cluster)" }),
  kafkaFetchMinBytes: v({ env: "KAFKA_FETCH_MIN_BYTES", kind: "int", default: "65536", min: 1, max: 16777216, description: "A stage's fetch waits on the broker until this many bytes are ready (or KAFKA_FETCH_MAX_WAIT_MS passed): larger batches, so fewer ClickHouse INSERTs (parts), Kafka requests and commits per page, at the cost of up to KAFKA_FETCH_MAX_WAIT_MS of latency per stage. 1 = answer as soon as anything is there.", roles: "all (cluster)" }),
  kafkaFetchMaxWaitMs: v({ env: "KAFKA_FETCH_MAX_WAIT_MS", kind: "int", default: "100", min: 10, max: 30000, description: "Longest time a stage's fetch waits on the broker for KAFKA_FETCH_MIN_BYTES while messages flow (after a fetch that brought nothing, the next waits for the first message, up to KAFKA_IDLE_FETCH_MAX_WAIT_MS). A graceful stop waits for the fetch in flight.", roles: "all (cluster)" }),
  kafkaIdleFetchMaxWaitMs: v({ env: "KAFKA_IDLE_FETCH_MAX_WAIT_MS", kind: "int", default: "1000", min: 100, max: 30000, description: "How long a consume loop's fetch waits on the broker while its topic is empty: after a fetch that brought nothing, and always for the loops whose topic is empty most of the time (render, webhook deliveries and retries, extract jobs, team admission, the API's event feed). Such a fetch is answered by the first message, so a message does not wait for it: it sets how often an idle loop asks Kafka (each empty fetch costs the broker and Trawl about a millisecond of CPU). A graceful stop or a rebalance waits for the fetch in flight, so up to this long; at most a third of KAFKA_SESSION_TIMEOUT_MS.", roles: "all (cluster)" }),
  kafkaCommitIntervalMs: v({ env: "KAFKA_COMMIT_INTERVAL_MS", kind: "int", default: "250", min: 0, max: 10000, description: "A consumer commits the offsets of handled batches together at most this often (0: after every batch). A crash redelivers at most this much work, which every stage handles idempotently.", roles: "all (cluster)" }),
  kafkaLingerMs: v({ env: "KAFKA_LINGER_MS", kind: "int", default: "5", min: 0, max: 1000, description: "A produce call waits this long for others to share its request (and calls made while a request is in flight always go together in the next one).", roles: "all (cluster)" }),
  kafkaCompression: v({ env: "KAFKA_COMPRESSION", kind: "enum", default: "zstd", values: ["none", "gzip", "zstd"], description: "Compression of the batches this process produces to Trawl's internal topics (pages.fetched carries every page's HTML). zstd (level 1; batches over 1 MB on libuv's thread pool) cuts the bytes Kafka copies, checksums and keeps about fivefold; every Trawl process reads all three whatever it writes.", roles: "all (cluster)" }),
  kafkaPublicCompression: v({ env: "KAFKA_PUBLIC_COMPRESSION", kind: "enum", default: "none", values: ["none", "gzip", "zstd"], description: "Compression of crawl.pages, crawl.events and crawl.changes, the topics downstream consumers read. none by default because not every client reads zstd (the Java client, librdkafka, confluent-kafka and @platformatic/kafka do; some other clients need a codec added); gzip is read by all of them.", roles: "all (cluster)" }),
  groupPrefix: v({ env: "KAFKA_GROUP_PREFIX", kind: "string", default: "trawl.", description: "Prefix of every consumer group id.", roles: "all" }),
  kafkaSecurityProtocol: v({ env: "KAFKA_SECURITY_PROTOCOL", kind: "enum", default: "PLAINTEXT", values: ["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"], description: "How every Kafka client of Trawl connects (Kafka's names): SSL = TLS, SASL_* = with a user (KAFKA_SASL_*), *_SSL = over TLS (trusting KAFKA_SSL_CA_FILE, else the system's CAs).", roles: "all (cluster)" }),
  kafkaSaslMechanism: v({ env: "KAFKA_SASL_MECHANISM", kind: "enum", default: "", values: ["", "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"], description: "SASL mechanism with KAFKA_SECURITY_PROTOCOL=SASL_PLAINTEXT or SASL_SSL (required there, refused with the others).", roles: "all (cluster)" }),
  kafkaSaslUsername: v({ env: "KAFKA_SASL_USERNAME", kind: "string", default: "", description: "SASL user (with KAFKA_SASL_MECHANISM).", roles: "all (cluster)" }),
  kafkaSaslPassword: v({ env: "KAFKA_SASL_PASSWORD", kind: "string", default: "", description: "SASL password. Never logged; a start the broker refuses stops naming the user and mechanism, not the password.", roles: "all (cluster)", secret: true }),
  kafkaSslCaFile: v({ env: "KAFKA_SSL_CA_FILE", kind: "string", default: "", description: "PEM file of the CA certificates that sign the brokers' certificates (SSL, SASL_SSL). Empty: the system's CAs. Read once at start; a missing file stops the start.", roles: "all (cluster)" }),
  kafkaSslCertFile: v({ env: "KAFKA_SSL_CERT_FILE", kind: "string", default: "", description: "PEM client certificate for brokers that require one (mutual TLS), with KAFKA_SSL_KEY_FILE.", roles: "all (cluster)" }),
  kafkaSslKeyFile: v({ env: "KAFKA_SSL_KEY_FILE", kind: "string", default: "", description: "PEM private key (unencrypted) of KAFKA_SSL_CERT_FILE.", roles: "all (cluster)" }),
  schemaRegistryUrl: v({ env: "SCHEMA_REGISTRY_URL", kind: "url", default: "", description: "Confluent-compatible Schema Registry (e.g. Apicurio's `/apis/ccompat/v7`). Set: the schemas of crawl.pages, crawl.events and crawl.changes are registered at start and those topics carry the Confluent wire format (JSON Schema). Empty: plain JSON.", roles: "all (cluster)" }),
  schemaRegistryUsername: v({ env: "SCHEMA_REGISTRY_USERNAME", kind: "string", default: "", description: "User for the Schema Registry's HTTP Basic authentication (with SCHEMA_REGISTRY_PASSWORD). Empty: none.", roles: "all (cluster)" }),
  schemaRegistryPassword: v({ env: "SCHEMA_REGISTRY_PASSWORD", kind: "string", default: "", description: "Password for the Schema Registry's Basic authentication. Never logged.", roles: "all (cluster)", secret: true }),
  schemaRegistryCaFile: v({ env: "SCHEMA_REGISTRY_CA_FILE", kind: "string", default: "", description: "PEM file of the CA certificates trusted for an https SCHEMA_REGISTRY_URL (besides the system's). Read once at start; a missing file stops the start.", roles: "all (cluster)" }),
  clickhouseUrl: v({ env: "CLICKHOUSE_URL", kind: "urlList", default: "http://127.0.0.1:18123", description: "ClickHouse HTTP interface; several replicas separated by commas: a request whose server is away (down, unreachable, cut off from ZooKeeper) is sent to the next, and the process stays on the one that answered.", roles: "all" }),
  clickhouseCluster: v({ env: "CLICKHOUSE_CLUSTER", kind: "string", default: "", description: "A ClickHouse cluster (`remote_servers`) whose replicas hold Trawl's tables: migrations run `ON CLUSTER` and create `Replicated*MergeTree` tables at `/clickhouse/tables/{shard}/<database>/<table>` with the servers' `{shard}`/`{replica}` macros (one shard of replicas; see docs/architecture.md). Empty: tables of one server.", roles: "all (cluster)" }),
  clickhouseDatabase: v({ env: "CLICKHOUSE_DATABASE", kind: "string", default: "trawl", description: "ClickHouse database (created at start).", roles: "all" }),
  clickhouseUser: v({ env: "CLICKHOUSE_USER", kind: "string", default: "default", description: "ClickHouse user.", roles: "all" }),
  clickhousePassword: v({ env: "CLICKHOUSE_PASSWORD", kind: "string", default: "", description: "ClickHouse password (sent in the Authorization header of each request; never logged).", roles: "all", secret: true }),
  clickhouseRequestTimeoutMs: v({ env: "CLICKHOUSE_REQUEST_TIMEOUT_MS", kind: "int", default: "60000", min: 1000, max: 3600000, description: "How long a ClickHouse request may go without a byte from its server (connecting, then any silence) before it fails as \"server away\" and goes to the next URL of CLICKHOUSE_URL (with one URL: retried like a server that is down). Statements (DDL, mutations) get 180 s more: an ON CLUSTER statement answers once every replica ran it. Longer than the slowest query you expect (ClickHouse sends nothing until a result is ready).", roles: "all" }),
  clickhouseCaFile: v({ env: "CLICKHOUSE_CA_FILE", kind: "string", default: "", description: "PEM file of the CA certificate(s) an `https://` CLICKHOUSE_URL is verified against (read once at start; a missing or unreadable file stops the start). Empty: the system's CAs (and Node's bundled ones). An untrusted certificate stops the start (STORE_TLS_UNTRUSTED).", roles: "all (cluster)" }),
  fetchTimeoutMs: v({ env: "FETCH_TIMEOUT_MS", kind: "int", default: "30000", min: 100, max: 600000, description: "Time limit of one page fetch (headers and body).", roles: "fetch-render, frontier" }),
  fetchMaxBytes: v({ env: "FETCH_MAX_BYTES", kind: "int", default: "10485760", min: 1024, max: 15000000, description: "Largest response body accepted, measured after decompressing a gzip/deflate/br Content-Encoding; larger pages fail with SCRAPE_TOO_LARGE.", roles: "fetch-render" }),
  fetchMaxRedirects: v({ env: "FETCH_MAX_REDIRECTS", kind: "int", default: "10", min: 0, max: 50, description: "Redirects followed per page.", roles: "fetch-render" }),
  fetchConcurrency: v({ env: "FETCH_CONCURRENCY", kind: "int", default: "16", min: 1, max: 1000, description: "Pages fetched at once per fetch-render process.", roles: "fetch-render" }),
  fetchRetries: v({ env: "FETCH_RETRIES", kind: "int", default: "2", min: 0, max: 10, description: "Retries of a transient fetch failure (5xx, reset, timeout).", roles: "fetch-render, frontier" }),
  proxyServer: v({ env: "PROXY_SERVER", kind: "proxyUrl", default: "", description: "Outbound HTTP proxy for page fetches and the browser's requests (`http://host:port` or `host:port`); scrape option `proxy` basic/auto uses it. Empty: direct.", roles: "fetch-render, render, api" }),
  proxyUsername: v({ env: "PROXY_USERNAME", kind: "string", default: "", description: "User for the proxy's Basic authentication (with PROXY_PASSWORD).", roles: "fetch-render, render, api" }),
  proxyPassword: v({ env: "PROXY_PASSWORD", kind: "string", default: "", description: "Password for the proxy's Basic authentication.", roles: "fetch-render, render, api", secret: true }),
  robotsUserAgent: v({ env: "ROBOTS_USER_AGENT", kind: "string", default: "TrawlBot", description: "User-agent token matched against robots.txt groups (a crawl's robotsUserAgent overrides it).", roles: "fetch-render" }),
  robotsCacheTtlMs: v({ env: "ROBOTS_CACHE_TTL_MS", kind: "int", default: "600000", min: 0, max: 86400000, description: "How long a host's robots.txt is reused.", roles: "fetch-render" }),
  hostMaxConcurrency: v({ env: "HOST_MAX_CONCURRENCY", kind: "int", default: "4", min: 1, max: 1000, description: "Fetches at once per host, across every crawl of one fetch-render process, to start with: a host that answers fast and clean earns more, up to HOST_MAX_CONCURRENCY_CEILING; 429, 503, time-outs, connection errors or a latency that climbs halve it (see docs/architecture.md). A crawl's maxConcurrency and delay, Retry-After and robots.txt's Crawl-delay always win.", roles: "fetch-render" }),
  hostMaxConcurrencyCeiling: v({ env: "HOST_MAX_CONCURRENCY_CEILING", kind: "int", default: "16", min: 1, max: 1000, description: "The most fetches at once a host's adaptive limit may reach. At or below HOST_MAX_CONCURRENCY: a fixed limit of HOST_MAX_CONCURRENCY (no growth; it still shrinks on 429, 503, time-outs).", roles: "fetch-render" }),
  politenessScope: v({ env: "POLITENESS_SCOPE", kind: "enum", default: "host", values: ["host", "domain"], description: "What shares one politeness (the adaptive limit of fetches at once, Retry-After pauses, robots.txt's Crawl-delay) across every crawl, team and fetch-render replica: host (host and port) or domain (the registrable domain: a.example.com and b.example.com share). fetch.tasks and render.tasks are keyed by it, so one replica owns each; set it alike on every role.", roles: "frontier, fetch-render" }),
  fetchTasksHeld: v({ env: "FETCH_TASKS_HELD", kind: "int", default: "256", min: 1, max: 10000, description: "Fetch tasks a fetch-render process holds per partition of fetch.tasks at once, running or waiting their host's turn (FETCH_CONCURRENCY of them fetch at once): a host that is slow or pausing holds only its own tasks, the others' go past them while it has fewer than this waiting. Each held task costs memory (20,000 pages over 200 hosts, embedded, 12 partitions: peak RSS 651 MB at 64, 727 at 256, 856 at 1000). The partition's offset commit waits for its oldest task.", roles: "fetch-render" }),
  hostWaitMaxMs: v({ env: "HOST_WAIT_MAX_MS", kind: "int", default: "60000", min: 1000, max: 3600000, description: "Longest a fetch task waits in a fetch-render process for its host's turn (a slow host, a Retry-After, a Crawl-delay): then it goes back to the end of fetch.tasks, so a host with thousands of pages waiting does not hold the partition's offsets.", roles: "fetch-render" }),
  hostDelayMs: v({ env: "HOST_DELAY_MS", kind: "int", default: "0", min: 0, max: 600000, description: "Least time between two fetch starts on one host, across crawls.", roles: "fetch-render, frontier" }),
  retryAfterMaxMs: v({ env: "RETRY_AFTER_MAX_MS", kind: "int", default: "30000", min: 0, max: 600000, description: "Longest Retry-After (429/503) honoured by waiting; longer ones fail the page.", roles: "fetch-render, frontier" }),
  maxSitemaps: v({ env: "SITEMAP_MAX_FILES", kind: "int", default: "20", min: 0, max: 1000, description: "Sitemap files read per crawl (indexes included).", roles: "fetch-render" }),
  sitemapMaxBytes: v({ env: "SITEMAP_MAX_BYTES", kind: "int", default: "52428800", min: 1024, max: 1073741824, description: "Largest inflated size of one gzipped sitemap (50 MiB, the sitemap protocol's limit); past it the sitemap is skipped with a crawl warning (SITEMAP_TOO_LARGE in /errors). A compressed response (Content-Encoding) is capped by FETCH_MAX_BYTES once inflated.", roles: "fetch-render" }),
  mapMaxPages: v({ env: "MAP_MAX_PAGES", kind: "int", default: "20", min: 0, max: 1000, description: "Pages POST /v2/map fetches for their links (beside the sitemaps), the start page first.", roles: "api" }),
  searxngEndpoint: v({ env: "SEARXNG_ENDPOINT", kind: "url", default: "", description: "A SearXNG instance (JSON format enabled) answering POST /v2/search. Empty: search runs over Trawl's own stored documents (BM25, offline).", roles: "api" }),
  searxngEngines: v({ env: "SEARXNG_ENGINES", kind: "string", default: "", description: "Comma-separated SearXNG engines to ask (empty: the instance's defaults).", roles: "api" }),
  searxngCategories: v({ env: "SEARXNG_CATEGORIES", kind: "string", default: "", description: "Comma-separated SearXNG categories (empty: general).", roles: "api" }),
  resolve: v({ env: "RESOLVE", kind: "hostMap", default: "", description: "Host name overrides like curl --resolve: `a.site.test:127.0.0.1,b.site.test:127.0.0.1` (tests, split-horizon DNS).", roles: "fetch-render" }),
  crawlEventsDocument: v({ env: "CRAWL_EVENTS_DOCUMENT", kind: "bool", default: "true", description: "Whether a `crawl.page` event on the public topic crawl.events carries the page's document (as it always did). false: the event carries its `seq` and the page's `urlKey` (the urlKey of its crawl.pages message) and no document, so a page crosses Kafka once less (the document is on crawl.pages and in the store); webhooks and WebSocket watchers still get the document, read from the store. Turn it off only once downstream readers of crawl.events take documents from crawl.pages.", roles: "sink" }),
  allowLocalWebhooks: v({ env: "ALLOW_LOCAL_WEBHOOKS", kind: "bool", default: "false", description: "Deliver webhooks to loopback, private, link-local, unique-local and other non-public addresses (refused at submit with 400 for localhost and IP literals, and checked on the address connected to).", roles: "api, webhook-emit" }),
  webhookSecret: v({ env: "SELF_HOSTED_WEBHOOK_HMAC_SECRET", kind: "string", default: "", description: "Key of the HMAC-SHA256 signature in X-Service-Signature. Empty: webhooks go unsigned (a warning is logged at start).", roles: "webhook-emit", secret: true }),
  defaultWebhookUrl: v({ env: "SELF_HOSTED_WEBHOOK_URL", kind: "url", default: "", description: "A webhook for every crawl and batch scrape that sets none (the request's `webhook` wins). Empty: none.", roles: "api" }),
  webhookTimeoutMs: v({ env: "WEBHOOK_TIMEOUT_MS", kind: "int", default: "10000", min: 100, max: 120000, description: "Time limit of one webhook attempt.", roles: "webhook-emit" }),
  webhookEndpointConcurrency: v({ env: "WEBHOOK_ENDPOINT_CONCURRENCY", kind: "int", default: "4", min: 1, max: 256, description: "Webhook attempts in flight at once to one endpoint (scheme + host + port, whichever of its URLs and crawls), per webhook-emit process. A crawl's event that finds none free, or that waited longer than WEBHOOK_TIMEOUT_MS, is parked on webhook.parked with the crawl's later events, so a slow endpoint delays only its own events.", roles: "webhook-emit" }),
  webhookMaxAttempts: v({ env: "WEBHOOK_MAX_ATTEMPTS", kind: "int", default: "4", min: 1, max: 20, description: "Attempts per webhook event (the first and the retries).", roles: "webhook-emit" }),
  webhookRetryDelaysMs: v({ env: "WEBHOOK_RETRY_DELAYS_MS", kind: "msList", default: "60000,300000,900000", description: "Waits before the 2nd, 3rd, ... attempt (comma-separated ms; the last repeats).", roles: "webhook-emit" }),
  convertWorkers: v({ env: "CONVERT_WORKERS", kind: "int", default: "2", min: 0, max: 64, description: "Worker threads converting pages off the event loop per convert process (0: convert on the main thread). A worker waits for the main thread between pages, so two keep conversion going while it is busy (cluster crawl of the manual on 2 cores: 136 → 199 pages/s; each worker adds ~35 MB RSS).", roles: "convert" }),
  convertTimeoutMs: v({ env: "CONVERT_TIMEOUT_MS", kind: "int", default: "30000", min: 100, max: 600000, description: "Time limit of one page's conversion in a worker; past it the page fails with SCRAPE_CONVERT_TIMEOUT.", roles: "convert, frontier" }),
  convertWorkerHeapMb: v({ env: "CONVERT_WORKER_HEAP_MB", kind: "int", default: "1024", min: 64, max: 65536, description: "V8 heap limit of each convert worker thread (MB). A page or upload whose conversion needs more (a DOCX of millions of tiny elements, a huge HTML tree) ends its worker, fails with SCRAPE_CONVERT_OUT_OF_MEMORY (413 on /v2/parse), and the worker is replaced; the process and the other pages go on. Also sizes what a DOCX upload may inflate to (1/48 of it: ~21 MiB of XML at 1024; more is refused with 400 before conversion). Memory a process may use for conversion: about CONVERT_WORKERS times this, plus what pdfjs holds outside the V8 heap, which this limit does not bound (its typed arrays: a PDF's decoded streams, at most 128 MiB decoded per file by the PDF guard; ~180 MB of RSS measured for one at that budget).", roles: "convert, api" }),
  render: v({ env: "RENDER", kind: "enum", default: "auto", values: ["auto", "always", "never"], description: "When pages go through headless Chromium. auto: static fetch first; the browser when the request needs one (waitFor, actions, screenshot, branding, mobile) or the static page is script-built (see docs/api.md). always: every HTML page. never: static only (requests that need a browser are refused).", roles: "fetch-render, render, api" }),
  renderConcurrency: v({ env: "RENDER_CONCURRENCY", kind: "int", default: "2", min: 1, max: 64, description: "Browser pages rendered at once per process (each one a fresh context in one Chromium).", roles: "fetch-render, render, api" }),
  chromiumPath: v({ env: "CHROMIUM_PATH", kind: "string", default: "/usr/bin/chromium", description: "The Chromium binary (Debian's chromium package). Missing: no rendering; auto falls back to static with a warning, requests that need a browser fail clearly.", roles: "fetch-render, render, api" }),
  blockAdsLists: v({ env: "BLOCK_ADS_LISTS", kind: "string", default: "/usr/share/chromium/extensions/ublock-origin/assets/thirdparties/easylist/easylist.txt,/usr/share/chromium/extensions/ublock-origin/assets/thirdparties/easylist/easyprivacy.txt", description: "Comma-separated Adblock-syntax filter lists whose whole-host rules (`||host^`) the browser refuses when a request's blockAds is true (the default). The default paths are EasyList and EasyPrivacy as Debian's webext-ublock-origin-chromium package installs them (read from disk, never fetched). Empty: nothing is blocked.", roles: "render, api" }),
  screenshots: v({ env: "SCREENSHOTS", kind: "enum", default: "url", values: ["url", "data-url"], description: "How screenshots (the screenshot format, screenshot actions) are returned. url: stored (ClickHouse, or DATA_DIR in embedded mode) and served at `/v2/screenshots/<job>/<id>.png` (or .jpeg) to the owning team, deleted with the job's results; data-url: inline `data:image/...;base64` in the document.", roles: "render, api" }),
  maxCpu: v({ env: "MAX_CPU", kind: "optionalFraction", default: "", description: "CPU use (0.0-1.0) above which a fetch-render (or render) worker runs fewer pages at once: the process's cgroup's use over its CPU quota (cgroup v2 cpu.max, v1 cfs quota) when one is set, else the whole machine's, whoever uses it. Above it the worker's limit falls in proportion each second (limit x MAX_CPU / use) down to LOAD_GUARD_MIN_CONCURRENCY (0 there: no new page until it drops), below it the limit grows back. Not set: only other processes' load counts, not Trawl's own (this process and its Chromium, Kafka, ClickHouse and registry on this machine): while the machine is at least 90 % busy and others use at least 10 % of it, Trawl keeps half of it, or what the others leave up to 90 % if more, and lowers its limit in proportion when it uses more (never below LOAD_GUARD_MIN_CONCURRENCY).", roles: "fetch-render" }),
  maxRam: v({ env: "MAX_RAM", kind: "fraction", default: "0.8", description: "Memory use (0.0-1.0) above which a fetch-render (or render) worker takes no new page until it drops, whatever LOAD_GUARD_MIN_CONCURRENCY (a page in flight is memory): the process's cgroup's use (without reclaimable file cache) over its limit (v2 memory.max, v1 memory.limit_in_bytes) when one is set, else the whole machine's.", roles: "fetch-render" }),
  loadGuardMinConcurrency: v({ env: "LOAD_GUARD_MIN_CONCURRENCY", kind: "int", default: "2", min: 0, max: 1000, description: "Pages a fetch-render (or render) worker keeps running at once however busy the CPU is (at most FETCH_CONCURRENCY / RENDER_CONCURRENCY): the load guard lowers its limit under CPU load (MAX_CPU) down to this floor, never below, so a crawl beside a busy neighbour slows but never stops. Memory over MAX_RAM still holds every new page. 0: an explicit MAX_CPU holds every new page while the CPU is above it.", roles: "fetch-render, render" }),
  cacheMaxAgeMs: v({ env: "CACHE_MAX_AGE_MS", kind: "int", default: "172800000", min: 0, max: 2592000000, description: "How long fetched responses stay in the page cache that `maxAge` reads (2 days); a request's maxAge is capped by it. 0: no page cache.", roles: "fetch-render, api" }),
  crawlUrlLogMax: v({ env: "CRAWL_URL_LOG_MAX", kind: "int", default: "10000", min: 0, max: 10000000, description: "Bound of `GET /v2/crawl/:id/urls` per crawl: at most this many skipped URLs (out of scope, excluded, too deep, over limit, other spellings) are listed with their reason, and the first this many crawled URLs keep their URL and the page that linked to them in every later state; past it URLs are counted (`unlisted`). The frontier holds ~200 bytes per listed URL.", roles: "frontier" }),
  warcDefault: v({ env: "WARC_DEFAULT", kind: "bool", default: "false", description: "Write every crawl and batch scrape as web archives (WARC 1.1 with a CDXJ index), as if each request said `warc: true` (a request's `warc: false` still turns it off).", roles: "api" }),
  warcDir: v({ env: "WARC_DIR", kind: "string", default: "", description: "Where web archives are written and served from: <dir>/<job id>/*.warc.gz and their CDXJ sidecars. Empty: DATA_DIR/warc. In cluster mode every fetch-render, render, api and frontier replica must see the same directory (a shared volume; the frontier cuts torn tails left by a killed writer).", roles: "fetch-render, render, api, frontier" }),
  warcMaxFileBytes: v({ env: "WARC_MAX_FILE_BYTES", kind: "int", default: "1000000000", min: 4096, max: 100000000000, description: "A WARC file is closed and the next one opened once it would grow past this size (1 GB, as Common Crawl's).", roles: "fetch-render, render" }),
  warcWriterThread: v({ env: "WARC_WRITER_THREAD", kind: "bool", default: "true", description: "Build, compress and write web archive records on a thread of their own (one per process), off the event loop that fetches (and in embedded mode runs every stage); false: on the event loop.", roles: "fetch-render, render" }),
  warcRetentionHours: v({ env: "WARC_RETENTION_HOURS", kind: "int", default: "24", min: 1, max: 876000, description: "How long a job's web archives are served and kept after its last record was written (the 24 h of results by default); the retention sweep deletes them after that. A team that needs them longer copies them out or sets this.", roles: "frontier, api" }),
  warcIdleCloseMs: v({ env: "WARC_IDLE_CLOSE_MS", kind: "int", default: "30000", min: 1000, max: 240000, description: "A job's WARC file is closed once its writer (a fetch-render or render process) has written no record of the job for this long (and at the process's stop); a closed file is complete, and uploaded when WARC_S3_URL is set. At most 4 minutes: a file untouched for 5 is taken for one a killed writer left (its torn tail is cut).", roles: "fetch-render, render" }),
  warcS3Url: v({ env: "WARC_S3_URL", kind: "s3Url", default: "", description: "Also copy web archives to an S3-compatible bucket: `s3://<bucket>/<prefix>`. Each closed WARC file goes to `<prefix>/<job id>/<name>`, and the job's merged CDXJ index to `<prefix>/<job id>/index.cdxj` once the job ended and its files are closed; a failed upload is retried with backoff, also after a restart (the local files stay served by the API; retention keeps a job's archives until they are uploaded). Credentials: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, else the AWS SDK's default chain (instance or pod role). Empty: no upload.", roles: "frontier" }),
  warcS3Endpoint: v({ env: "WARC_S3_ENDPOINT", kind: "url", default: "", description: "Endpoint of a non-AWS S3-compatible server (SeaweedFS, MinIO, Ceph, a cloud's S3 API), e.g. `http://127.0.0.1:18333`. Empty: AWS S3 of WARC_S3_REGION.", roles: "frontier" }),
  warcS3Region: v({ env: "WARC_S3_REGION", kind: "string", default: "us-east-1", description: "Region of WARC_S3_URL's bucket (signing region; most non-AWS servers accept any).", roles: "frontier" }),
  warcS3ForcePathStyle: v({ env: "WARC_S3_FORCE_PATH_STYLE", kind: "enum", default: "auto", values: ["auto", "true", "false"], description: "Address the bucket as `<endpoint>/<bucket>/<key>` (true) or `<bucket>.<endpoint>/<key>` (false). auto: path style when WARC_S3_ENDPOINT is set (what most non-AWS servers need), virtual-hosted on AWS.", roles: "frontier" }),
  awsAccessKeyId: v({ env: "AWS_ACCESS_KEY_ID", kind: "string", default: "", description: "Access key of WARC_S3_URL's bucket (with AWS_SECRET_ACCESS_KEY; both or neither). Empty: the AWS SDK's default credential chain.", roles: "frontier", secret: true }),
  awsSecretAccessKey: v({ env: "AWS_SECRET_ACCESS_KEY", kind: "string", default: "", description: "Secret of AWS_ACCESS_KEY_ID. Never logged.", roles: "frontier", secret: true }),
  retentionSweepMs: v({ env: "RETENTION_SWEEP_MS", kind: "int", default: "600000", min: 1000, max: 86400000, description: "How often expired results (24 h after a crawl ended) are deleted.", roles: "frontier" }),
  extractProvider: v({ env: "EXTRACT_PROVIDER", kind: "enum", default: "auto", values: ["auto", "rules", "llm"], description: "Provider of the json format, summaries and /v2/extract: auto = llm when OPENAI_BASE_URL/OPENAI_API_KEY/OLLAMA_BASE_URL is set, rules otherwise; rules = no model ever; llm = the model (the start stops when none is configured).", roles: "extract-json, api" }),
  openaiBaseUrl: v({ env: "OPENAI_BASE_URL", kind: "url", default: "", description: "OpenAI-compatible API base (e.g. `http://127.0.0.1:8000/v1`); `/chat/completions` is appended. Empty with OPENAI_API_KEY set: `https://api.openai.com/v1`.", roles: "extract-json, api" }),
  openaiApiKey: v({ env: "OPENAI_API_KEY", kind: "string", default: "", description: "Bearer key of the chat-completions endpoint (may stay empty for local servers).", roles: "extract-json, api", secret: true }),
  ollamaBaseUrl: v({ env: "OLLAMA_BASE_URL", kind: "url", default: "", description: "Alias of OPENAI_BASE_URL for Ollama (`http://127.0.0.1:11434`; its OpenAI-compatible `/v1` is used).", roles: "extract-json, api" }),
  modelName: v({ env: "MODEL_NAME", kind: "string", default: "gpt-4o-mini", description: "Model asked for JSON extraction, summaries and crawl prompts.", roles: "extract-json, api" }),
  llmTimeoutMs: v({ env: "LLM_TIMEOUT_MS", kind: "int", default: "60000", min: 100, max: 600000, description: "Time limit of one chat-completions call.", roles: "extract-json, api, frontier" }),
  llmRetries: v({ env: "LLM_RETRIES", kind: "int", default: "3", min: 0, max: 10, description: "Retries of a call answered 429 or 5xx (backoff with jitter, Retry-After honoured up to 30 s).", roles: "extract-json, api, frontier" }),
  llmConcurrency: v({ env: "LLM_CONCURRENCY", kind: "int", default: "4", min: 1, max: 256, description: "Chat-completions calls at once per process.", roles: "extract-json, api" }),
  llmMaxInputTokens: v({ env: "LLM_MAX_INPUT_TOKENS", kind: "int", default: "12000", min: 256, max: 1000000, description: "Token budget of the page markdown sent to the model (estimated at 4 characters a token; the rest is cut).", roles: "extract-json, api" }),
  extractConcurrency: v({ env: "EXTRACT_CONCURRENCY", kind: "int", default: "4", min: 1, max: 256, description: "Pages extracted at once per extract-json process.", roles: "extract-json" }),
  userAgent: v({ env: "USER_AGENT", kind: "string", default: "Mozilla/5.0 (compatible; TrawlBot/0.1)", description: "User-Agent of every fetch.", roles: "fetch-render" }),
  metricsPort: v({ env: "METRICS_PORT", kind: "int", default: "0", min: 0, max: 65535, description: "Port of /metrics (Prometheus), /health and /ready in a process without the api role (the api serves them on PORT). 0: none.", roles: "all but api" }),
  logLevel: v({ env: "LOG_LEVEL", aliases: ["LOGGING_LEVEL"], kind: "enum", default: "info", values: ["fatal", "error", "warn", "info", "debug", "trace", "silent"], description: "pino log level.", roles: "all" }),
} as const;

type Vars = typeof configVars;
type ValueOf<V> = V extends Var<"int"> | Var<"fraction"> ? number
  : V extends Var<"optionalFraction"> ? number | null
  : V extends Var<"bool"> ? boolean
  : V extends Var<"msList"> ? number[]
  : V extends Var<"hostMap"> ? Record<string, string>
  : string;
export type Config = { [K in keyof Vars]: ValueOf<Vars[K]> };

export class ConfigError extends Error {
  readonly code = "CONFIG_INVALID";
}

function parseVar(spec: Var, raw: string): string | number | boolean | number[] | Record<string, string> | null {
  const bad = (why: string) => new ConfigError(`config: ${spec.env}=${JSON.stringify(raw)} is invalid: ${why}`);
  switch (spec.kind) {
    case "int": {
      if (!/^-?\d+$/.test(raw.trim())) throw bad("expected an integer");
      const n = Number(raw);
      if (spec.min !== undefined && n < spec.min) throw bad(`must be >= ${spec.min}`);
      if (spec.max !== undefined && n > spec.max) throw bad(`must be <= ${spec.max}`);
      return n;
    }
    case "optionalFraction":
    case "fraction": {
      if (spec.kind === "optionalFraction" && raw.trim() === "") return null; // not set: the variable's own rule
      const n = Number(raw.trim());
      if (raw.trim() === "" || !Number.isFinite(n) || n < 0 || n > 1) throw bad("expected a fraction from 0.0 to 1.0");
      return n;
    }
    case "bool": {
      const s = raw.trim().toLowerCase();
      if (["true", "1", "yes"].includes(s)) return true;
      if (["false", "0", "no", ""].includes(s)) return false;
      throw bad("expected true or false");
    }
    case "url": {
      if (raw === "" && spec.default === "") return ""; // optional: empty means "not used"
      try {
        const u = new URL(raw);
        if (!/^https?:$/.test(u.protocol)) throw bad("expected an http(s) URL");
      } catch (err) {
        if (err instanceof ConfigError) throw err;
        throw bad("expected a URL");
      }
      return raw.replace(/\/+$/, "");
    }
    case "s3Url": {
      // `s3://bucket/some/prefix/` -> `s3://bucket/some/prefix`; empty: not used
      const text = raw.trim();
      if (!text) return "";
      const m = /^s3:\/\/([^/]+)(\/.*)?$/.exec(text);
      if (!m) throw bad("expected s3://<bucket>/<prefix>");
      if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(m[1]!) || m[1]!.includes("..")) throw bad(`${JSON.stringify(m[1])} is not a bucket name (3-63 lowercase letters, digits, dots and hyphens)`);
      const prefix = (m[2] ?? "").replace(/^\/+|\/+$/g, "");
      if (prefix && prefix.split("/").some((part) => part === "" || part === "." || part === "..")) throw bad("the prefix has an empty, . or .. segment");
      return prefix ? `s3://${m[1]}/${prefix}` : `s3://${m[1]}`;
    }
    case "urlList": {
      // `http://a:8123,http://b:8123` -> the same, each checked as a url, without trailing slashes
      const list = raw.split(",").map((x) => x.trim()).filter(Boolean);
      if (list.length === 0) throw bad("expected a URL, or several separated by commas");
      return list.map((u) => parseVar({ ...spec, kind: "url", default: "x" }, u)).join(",");
    }
    case "msList": {
      // `60000,300000` -> [60000, 300000]
      const list = raw.split(",").map((x) => x.trim()).filter(Boolean);
      if (list.length === 0 || list.some((x) => !/^\d+$/.test(x))) throw bad("expected comma-separated milliseconds");
      return list.map(Number);
    }
    case "hostMap": {
      // `a.test:127.0.0.1,b.test:::1` -> { "a.test": "127.0.0.1", "b.test": "::1" }
      const out: Record<string, string> = {};
      for (const item of raw.split(",").map((x) => x.trim()).filter(Boolean)) {
        const i = item.indexOf(":");
        if (i <= 0) throw new ConfigError(`config: ${spec.env} entry ${JSON.stringify(item)} is invalid: expected host:address`);
        out[item.slice(0, i).toLowerCase()] = item.slice(i + 1);
      }
      return out;
    }
    case "proxyUrl": {
      // `http://host:port`, `https://…` or `host:port` -> `scheme://host:port`; empty: no proxy
      const text = raw.trim();
      if (!text) return "";
      let u: URL;
      try {
        u = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `http://${text}`);
      } catch {
        throw bad("expected http://host:port or host:port");
      }
      if (u.protocol !== "http:" && u.protocol !== "https:") throw bad("only http and https proxies are supported");
      if (!u.hostname || !u.port) throw bad("expected a host and a port");
      return `${u.protocol}//${u.host}`;
    }
    case "enum":
      if (!spec.values?.includes(raw) && spec.values?.includes(raw.toLowerCase())) return raw.toLowerCase(); // Firecrawl writes INFO
      if (!spec.values?.includes(raw) && spec.values?.includes(raw.toUpperCase())) return raw.toUpperCase(); // sasl_ssl
      if (!spec.values?.includes(raw)) throw bad(`expected one of ${spec.values?.map((x) => x || "(empty)").join(", ")}`);
      return raw;
    default:
      return raw;
  }
}

/** Parses the environment (or overrides, in tests) into a typed config. Throws ConfigError naming the variable. */
export function loadConfig(env: Record<string, string | undefined> = process.env, overrides: Partial<Config> = {}): Config {
  const out: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries(configVars) as [string, Var][]) {
    const given = [spec.env, ...(spec.aliases ?? [])].filter((n) => env[n] !== undefined).map((n) => ({ n, value: parseVar({ ...spec, env: n }, env[n] as string) }));
    const first = given[0];
    const other = given.find((g) => g.value !== first?.value);
    if (first && other) {
      throw new ConfigError(`config: ${first.n}=${JSON.stringify(env[first.n])} and ${other.n}=${JSON.stringify(env[other.n])} conflict (${other.n} is another name of ${spec.env}); set one of them`);
    }
    out[name] = first ? first.value : parseVar(spec, spec.default);
  }
  const config = { ...(out as Config), ...overrides };
  // an idle fetch holds its connection: it must leave room for several heartbeats in a session
  if (config.kafkaIdleFetchMaxWaitMs * 3 > config.kafkaSessionTimeoutMs) {
    throw new ConfigError(
      `config: KAFKA_IDLE_FETCH_MAX_WAIT_MS=${config.kafkaIdleFetchMaxWaitMs} must be at most a third of KAFKA_SESSION_TIMEOUT_MS=${config.kafkaSessionTimeoutMs} (a stop or a rebalance waits for the fetch in flight)`,
    );
  }
  if (config.kafkaReplicationFactor > 0 && config.kafkaMinInsyncReplicas > config.kafkaReplicationFactor) {
    throw new ConfigError(`config: KAFKA_MIN_INSYNC_REPLICAS=${config.kafkaMinInsyncReplicas} is more than KAFKA_REPLICATION_FACTOR=${config.kafkaReplicationFactor} (no produce could ever succeed)`);
  }
  if ((config.awsAccessKeyId === "") !== (config.awsSecretAccessKey === "")) {
    throw new ConfigError(`config: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY go together: ${config.awsAccessKeyId ? "AWS_SECRET_ACCESS_KEY" : "AWS_ACCESS_KEY_ID"} is not set`);
  }
  return config;
}

/** Markdown table of every variable, for docs/configuration.md. */
export function configTable(): string {
  const rows = Object.values(configVars).map(
    (s: Var) => `| \`${s.env}\` | \`${s.default}\` | ${s.roles} | ${s.description}${s.aliases ? ` Also read as ${s.aliases.map((a) => `\`${a}\``).join(", ")}.` : ""} |`,
  );
  return ["| variable | default | roles | meaning |", "|---|---|---|---|", ...rows].join("\n");
}
