// Confluent Schema Registry for the public topics (crawl.pages, crawl.events, crawl.changes): their JSON Schemas are registered
// under the subject `<topic>-value` at start, and their messages carry the Confluent wire format (magic byte 0,
// 4-byte schema id, JSON). Internal topics stay plain JSON. Used only in cluster mode when SCHEMA_REGISTRY_URL is set.
import { Agent as HttpsAgent } from "node:https";
import { SchemaRegistry, SchemaType } from "@kafkajs/confluent-schema-registry";
import { Agent as UndiciAgent } from "undici";
import { Ajv } from "ajv";
import addFormatsModule from "ajv-formats";
import { schemas, type SchemaName } from "../../schemas/index.ts";
import { physicalTopic, topics, type LogicalTopic } from "../topology.ts";
import { ConfigError, type Config } from "./config.ts";
import { InfrastructureError, TrawlError } from "./errors.ts";
import { readPemFile } from "./kafka-security.ts";
import type { Logger } from "./logger.ts";
import { backoffMs, sleep } from "./retry.ts";

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

/** Encodes the values of registered topics; `encoderFor` is undefined for a topic that stays plain JSON. */
export interface RegistryCodec {
  encoderFor(topic: LogicalTopic): ((value: unknown) => Promise<Buffer>) | undefined;
  /** Registered schema id per logical topic (for logs and tests). */
  readonly ids: ReadonlyMap<LogicalTopic, number>;
}

/**
 * One self-contained schema: every `x.schema.json` it references is inlined under `$defs` (the registry and a
 * downstream validator see a single document). `$id`s are dropped: the registry's id names the schema.
 */
export function bundledSchema(name: SchemaName): Record<string, unknown> {
  const defs: Record<string, unknown> = {};
  const rewrite = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(rewrite);
    if (node === null || typeof node !== "object") return node;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(node)) {
      if (k === "$id") continue;
      const ref = k === "$ref" && typeof v === "string" ? /^([a-z0-9-]+)\.schema\.json$/.exec(v) : null;
      if (ref) {
        const target = ref[1] as SchemaName;
        if (!(target in defs)) {
          defs[target] = {}; // placeholder first: a cycle ends here
          defs[target] = rewrite(schemas[target]);
        }
        out[k] = `#/$defs/${target}`;
      } else out[k] = rewrite(v);
    }
    return out;
  };
  const root = rewrite(schemas[name]) as Record<string, unknown>;
  return Object.keys(defs).length > 0 ? { ...root, $defs: { ...(root.$defs as object), ...defs } } : root;
}

/** How to reach the registry: its URL, Basic credentials and the extra CAs an https URL trusts. */
export interface RegistryConnection {
  url: string;
  auth?: { username: string; password: string };
  ca?: string;
}

/**
 * The registry connection of the configuration (SCHEMA_REGISTRY_*); reads the CA file now (a missing one stops the
 * start naming SCHEMA_REGISTRY_CA_FILE). Throws ConfigError.
 */
export function registryConnection(config: Pick<Config, "schemaRegistryUrl" | "schemaRegistryUsername" | "schemaRegistryPassword" | "schemaRegistryCaFile">): RegistryConnection {
  const { schemaRegistryUrl: url, schemaRegistryUsername: username, schemaRegistryPassword: password, schemaRegistryCaFile: caFile } = config;
  if (password !== "" && username === "") throw new ConfigError("config: SCHEMA_REGISTRY_PASSWORD is set without SCHEMA_REGISTRY_USERNAME");
  if (caFile !== "" && !url.startsWith("https:")) throw new ConfigError(`config: SCHEMA_REGISTRY_CA_FILE is set but SCHEMA_REGISTRY_URL=${JSON.stringify(url)} is not an https URL`);
  return {
    url,
    ...(username ? { auth: { username, password } } : {}),
    ...(caFile ? { ca: readPemFile("SCHEMA_REGISTRY_CA_FILE", caFile) } : {}),
  };
}

/** A registry client whose JSON validator knows the formats the schemas use (uri, date-time). */
export function registryClient(conn: RegistryConnection): SchemaRegistry {
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats(ajv);
  const agent = conn.ca ? new HttpsAgent({ ca: conn.ca, keepAlive: true }) : undefined;
  return new SchemaRegistry({ host: conn.url, clientId: "trawl", ...(conn.auth ? { auth: conn.auth } : {}), ...(agent ? { agent } : {}) }, { [SchemaType.JSON]: { ajvInstance: ajv } });
}

/**
 * Registers one schema version under a subject and returns its id (the same schema gets the same id again).
 * The registry applies the subject's compatibility rule, whatever its operators set it to; Trawl does not change it.
 * A 409 is asked again twice: replicas starting together register the same new subject at once, and Apicurio answers
 * all but the first with 409 "already exists" (every role of a fresh compose stack stopped on it); asked again it
 * returns the id, while a schema the subject's rule refuses is refused again.
 */
async function registerSchema(conn: RegistryConnection, subject: string, schema: string): Promise<number> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await registerSchemaOnce(conn, subject, schema);
    } catch (err) {
      if (!(err instanceof TrawlError && err.code === "SCHEMA_REJECTED" && err.statusCode === 409) || attempt >= 2) throw err;
      await sleep(backoffMs(attempt, 100, 1000));
    }
  }
}

async function registerSchemaOnce(conn: RegistryConnection, subject: string, schema: string): Promise<number> {
  const url = conn.url;
  const authorization = conn.auth ? { authorization: `Basic ${Buffer.from(`${conn.auth.username}:${conn.auth.password}`).toString("base64")}` } : {};
  const dispatcher = conn.ca ? new UndiciAgent({ connect: { ca: conn.ca } }) : undefined;
  let res: Response;
  try {
    res = await fetch(`${url}/subjects/${encodeURIComponent(subject)}/versions`, {
      method: "POST",
      headers: { "content-type": "application/vnd.schemaregistry.v1+json", accept: "application/vnd.schemaregistry.v1+json", ...authorization },
      body: JSON.stringify({ schemaType: "JSON", schema }),
      signal: AbortSignal.timeout(10_000),
      ...(dispatcher ? { dispatcher } : {}),
    } as RequestInit);
  } catch (err) {
    throw new InfrastructureError("SCHEMA_REGISTRY_UNAVAILABLE", `could not reach the schema registry at ${url}: ${(err as Error).message}`, err);
  }
  const text = await res.text();
  if (res.status === 401 || res.status === 403) {
    const who = conn.auth ? `SCHEMA_REGISTRY_USERNAME=${JSON.stringify(conn.auth.username)}: check it and SCHEMA_REGISTRY_PASSWORD (not shown)` : "no SCHEMA_REGISTRY_USERNAME set";
    throw new ConfigError(`config: the schema registry at ${url} refused Trawl (HTTP ${res.status}) with ${who}`);
  }
  if (res.status >= 400 && res.status < 500) {
    // e.g. 409: the schema of this version is not compatible with the registered ones under the subject's rule
    throw new TrawlError("SCHEMA_REJECTED", `the schema registry at ${url} refused the schema of ${subject} (HTTP ${res.status}): ${text.slice(0, 500)}`, { statusCode: res.status });
  }
  const id = res.ok ? (JSON.parse(text) as { id?: unknown }).id : undefined;
  if (typeof id !== "number") throw new InfrastructureError("SCHEMA_REGISTRY_UNAVAILABLE", `the schema registry at ${url} answered HTTP ${res.status} for ${subject}: ${text.slice(0, 500)}`);
  return id;
}

/** Registers the public topics' schemas and returns their encoders. */
export async function connectRegistry(conn: RegistryConnection, topicPrefix: string, log: Logger): Promise<RegistryCodec> {
  const registry = registryClient(conn);
  const ids = new Map<LogicalTopic, number>();
  for (const t of topics.filter((t) => t.public)) {
    const subject = `${physicalTopic(topicPrefix, t.name)}-value`;
    const id = await registerSchema(conn, subject, JSON.stringify(bundledSchema(t.schema)));
    ids.set(t.name, id);
    log.info({ subject, schemaId: id }, "schema registered");
  }
  return {
    ids,
    encoderFor(topic) {
      const id = ids.get(topic);
      return id === undefined ? undefined : (value) => registry.encode(id, value);
    },
  };
}

/**
 * The JSON text of a message value: a Confluent wire-format value (magic byte 0 + schema id) has its 5-byte header
 * removed; plain JSON is returned as is (JSON never starts with a NUL byte). The stage validates the JSON against
 * the same schema afterwards.
 */
export function messageText(value: Buffer | null): string | null {
  if (value === null) return null;
  return value.length >= 5 && value[0] === 0 ? value.subarray(5).toString() : value.toString();
}
