// How Trawl's Kafka clients connect to a secured cluster (KAFKA_SECURITY_PROTOCOL, KAFKA_SASL_*, KAFKA_SSL_*): the
// one place that turns the configuration into the client's `tls` and `sasl` options, reads the PEM files (once, at
// start: a missing or unreadable file stops the start naming its variable) and explains a refused login by the
// variables to check, never by the password. The options are @platformatic/kafka's (`tls`, `sasl`).
import { readFileSync } from "node:fs";
import type { ConnectionOptions as TlsOptions } from "node:tls";
import type { SASLOptions } from "@platformatic/kafka";
import { ConfigError, type Config } from "./config.ts";

type KafkaSecurityConfig = Pick<
  Config,
  "kafkaSecurityProtocol" | "kafkaSaslMechanism" | "kafkaSaslUsername" | "kafkaSaslPassword" | "kafkaSslCaFile" | "kafkaSslCertFile" | "kafkaSslKeyFile"
>;

/** The contents of a PEM file named by `variable`; a missing or unreadable one stops the start. */
export function readPemFile(variable: string, path: string): string {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    throw new ConfigError(`config: ${variable}=${JSON.stringify(path)} cannot be read: ${(err as Error).message}`, { cause: err });
  }
  if (!text.includes("-----BEGIN ")) throw new ConfigError(`config: ${variable}=${JSON.stringify(path)} is not a PEM file (no -----BEGIN line)`);
  return text;
}

/** The client's `tls` and `sasl` options for the configured protocol; throws ConfigError naming the variable. */
export function kafkaSecurity(config: KafkaSecurityConfig): { tls?: TlsOptions; tlsServerName?: boolean; sasl?: SASLOptions } {
  const protocol = config.kafkaSecurityProtocol;
  const tls = protocol === "SSL" || protocol === "SASL_SSL";
  const sasl = protocol === "SASL_PLAINTEXT" || protocol === "SASL_SSL";
  const saslVars = { KAFKA_SASL_MECHANISM: config.kafkaSaslMechanism, KAFKA_SASL_USERNAME: config.kafkaSaslUsername, KAFKA_SASL_PASSWORD: config.kafkaSaslPassword };
  const sslVars = { KAFKA_SSL_CA_FILE: config.kafkaSslCaFile, KAFKA_SSL_CERT_FILE: config.kafkaSslCertFile, KAFKA_SSL_KEY_FILE: config.kafkaSslKeyFile };
  const setIn = (vars: Record<string, string>) => Object.keys(vars).filter((k) => vars[k] !== "");
  if (sasl) {
    const missing = Object.keys(saslVars).filter((k) => saslVars[k as keyof typeof saslVars] === "");
    if (missing.length > 0) throw new ConfigError(`config: KAFKA_SECURITY_PROTOCOL=${protocol} needs ${missing.join(", ")} (not set)`);
  } else if (setIn(saslVars).length > 0) {
    // a login that would silently not happen
    throw new ConfigError(`config: ${setIn(saslVars).join(", ")} set but KAFKA_SECURITY_PROTOCOL=${protocol} does not use SASL (SASL_PLAINTEXT or SASL_SSL does)`);
  }
  if (!tls && setIn(sslVars).length > 0) {
    throw new ConfigError(`config: ${setIn(sslVars).join(", ")} set but KAFKA_SECURITY_PROTOCOL=${protocol} does not use TLS (SSL or SASL_SSL does)`);
  }
  if ((config.kafkaSslCertFile === "") !== (config.kafkaSslKeyFile === "")) {
    throw new ConfigError("config: KAFKA_SSL_CERT_FILE and KAFKA_SSL_KEY_FILE go together (a client certificate and its key): set both or neither");
  }
  const tlsOptions: TlsOptions | undefined = tls
    ? {
        ...(config.kafkaSslCaFile ? { ca: [readPemFile("KAFKA_SSL_CA_FILE", config.kafkaSslCaFile)] } : {}),
        ...(config.kafkaSslCertFile ? { cert: readPemFile("KAFKA_SSL_CERT_FILE", config.kafkaSslCertFile), key: readPemFile("KAFKA_SSL_KEY_FILE", config.kafkaSslKeyFile) } : {}),
      }
    : undefined;
  return {
    // the broker's host name as SNI (the client sends none unless asked; a cluster behind an SNI-routing proxy needs it)
    ...(tlsOptions ? { tls: tlsOptions, tlsServerName: true } : {}),
    ...(sasl ? { sasl: saslOptions(config) } : {}),
  };
}

function saslOptions(config: KafkaSecurityConfig): SASLOptions {
  const { kafkaSaslUsername: username, kafkaSaslPassword: password } = config;
  switch (config.kafkaSaslMechanism) {
    case "PLAIN":
      return { mechanism: "PLAIN", username, password };
    case "SCRAM-SHA-256":
      return { mechanism: "SCRAM-SHA-256", username, password };
    default:
      return { mechanism: "SCRAM-SHA-512", username, password };
  }
}

const TLS_TRUST_CODES = new Set([
  "SELF_SIGNED_CERT_IN_CHAIN",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "CERT_HAS_EXPIRED",
  "ERR_TLS_CERT_ALTNAME_INVALID",
]);

/**
 * A connection failure that waiting will not cure, as a ConfigError naming the variables to check: the broker
 * refused the login (the client's AuthenticationError, PLT_KFK_AUTHENTICATION), or its certificate is not trusted.
 * Else undefined. Looks through causes and the errors of an AggregateError (the client's MultipleErrors).
 */
export function kafkaSecurityFailure(err: unknown, config: KafkaSecurityConfig): ConfigError | undefined {
  const seen: unknown[] = [err];
  for (let i = 0; i < seen.length && i < 30; i++) {
    const e = seen[i];
    if (!(e instanceof Error)) continue;
    if (e.cause !== undefined) seen.push(e.cause);
    if (e instanceof AggregateError) seen.push(...e.errors);
    if ((e as { code?: unknown }).code === "PLT_KFK_AUTHENTICATION") {
      return new ConfigError(
        `config: Kafka refused the login of KAFKA_SASL_USERNAME=${JSON.stringify(config.kafkaSaslUsername)} with KAFKA_SASL_MECHANISM=${config.kafkaSaslMechanism}: check KAFKA_SASL_PASSWORD (not shown), the user and the mechanism (${e.message})`,
        { cause: e },
      );
    }
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && TLS_TRUST_CODES.has(code)) {
      return new ConfigError(`config: the Kafka broker's TLS certificate is not trusted (${code}): check KAFKA_SSL_CA_FILE${config.kafkaSslCaFile ? `=${JSON.stringify(config.kafkaSslCaFile)}` : " (not set: the system's CAs)"} and KAFKA_BROKERS (${e.message})`, { cause: e });
    }
  }
  return undefined;
}
