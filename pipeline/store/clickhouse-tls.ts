// TLS to ClickHouse (an https:// CLICKHOUSE_URL) and the failures that must stop a start instead of being waited out:
// a certificate the configured CAs do not trust, credentials the server refuses. No message here carries the
// password or the URL's user part.
import { X509Certificate } from "node:crypto";
import { readFileSync } from "node:fs";
import { Agent } from "node:https";
import { getCACertificates } from "node:tls";
import { ConfigError } from "../runtime/config.ts";
import { InfrastructureError } from "../runtime/errors.ts";

/**
 * The HTTPS agent of one ClickHouse client: verifies the server against the CA certificates of `caFile` (PEM), or,
 * when it is empty, against the system's CAs and Node's bundled ones. Undefined for an http:// URL. The file is read
 * here, once; a missing, unreadable or certificate-less file is a ConfigError naming CLICKHOUSE_CA_FILE.
 */
export function clickHouseAgent(url: string, caFile: string): Agent | undefined {
  const own = caFile ? readCa(caFile) : undefined; // checked even for an http:// URL: a wrong path is always an error
  if (new URL(url).protocol !== "https:") return undefined;
  return new Agent({ ca: own ?? [...new Set([...getCACertificates("system"), ...getCACertificates("default")])], keepAlive: true });
}

function readCa(caFile: string): string {
  let pem: string;
  try {
    pem = readFileSync(caFile, "utf8");
  } catch (err) {
    throw new ConfigError(`config: CLICKHOUSE_CA_FILE=${JSON.stringify(caFile)} cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  const bad = (why: string) => new ConfigError(`config: CLICKHOUSE_CA_FILE=${JSON.stringify(caFile)} holds no PEM certificate (${why})`);
  if (!pem.includes("-----BEGIN CERTIFICATE-----")) throw bad("no BEGIN CERTIFICATE line");
  try {
    new X509Certificate(pem);
  } catch (err) {
    throw bad((err as Error).message);
  }
  return pem;
}

/**
 * A user or password in CLICKHOUSE_URL would be dropped by the client (it connects with CLICKHOUSE_USER) and printed
 * wherever the URL is: refused at start, without repeating the URL.
 */
export function refuseCredentialsInUrl(url: string): void {
  const u = new URL(url);
  if (u.username || u.password) {
    throw new ConfigError("config: CLICKHOUSE_URL carries a user or password (user:password@host): set CLICKHOUSE_USER and CLICKHOUSE_PASSWORD instead, and the URL without them");
  }
}

/** Where the client connects, for messages: scheme, host and port only (never a user or password), of each URL of a list. */
export function safeOrigin(url: string): string {
  return url.split(",").map((u) => u.trim()).filter(Boolean).map((u) => new URL(u).origin).join(",");
}

/** OpenSSL's codes for a certificate chain the client does not trust, and Node's for a name it was not issued to. */
const UNTRUSTED = /^(UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT(_LOCALLY)?|SELF_SIGNED_CERT_IN_CHAIN|DEPTH_ZERO_SELF_SIGNED_CERT|CERT_[A-Z_]+|ERR_TLS_CERT_ALTNAME_INVALID|HOSTNAME_MISMATCH)$/;
/** ClickHouse's UNKNOWN_USER, WRONG_PASSWORD, REQUIRED_PASSWORD, AUTHENTICATION_FAILED (the HTTP answer's text). */
const AUTH_REFUSED = /\bCode: (192|193|194|516)\b/;

const hint = (code: string) =>
  code === "ERR_TLS_CERT_ALTNAME_INVALID" ? "the certificate must name the host of CLICKHOUSE_URL (subjectAltName)"
  : code.startsWith("CERT_") && code !== "CERT_UNTRUSTED" ? "the server's certificate itself must be renewed or fixed"
  : "set CLICKHOUSE_CA_FILE to the PEM file of the CA that signed it";

/**
 * A certificate or credential failure as an InfrastructureError with its own code (retried like an outage while
 * running, so no work is lost until it is fixed; not waited out at start), or undefined for any other failure.
 */
export function tlsOrAuthFailure(err: unknown, url: string, caFile: string, what: string): InfrastructureError | undefined {
  const code = (err as { code?: unknown })?.code;
  const message = err instanceof Error ? err.message : String(err);
  if (typeof code === "string" && UNTRUSTED.test(code)) {
    const trusted = caFile ? `the CA of CLICKHOUSE_CA_FILE=${JSON.stringify(caFile)}` : "the system's CAs (CLICKHOUSE_CA_FILE is empty)";
    return new InfrastructureError("STORE_TLS_UNTRUSTED", `clickhouse ${what} failed: the certificate of CLICKHOUSE_URL=${safeOrigin(url)} is not trusted by ${trusted}: ${code} (${message.split(";")[0]}); ${hint(code)}`, err);
  }
  if (AUTH_REFUSED.test(message)) {
    const detail = /Exception: ([^,]+)/.exec(message)?.[1] ?? "authentication failed";
    return new InfrastructureError("STORE_AUTH_REFUSED", `clickhouse ${what} failed: ${safeOrigin(url)} refused CLICKHOUSE_USER/CLICKHOUSE_PASSWORD (${detail})`, err);
  }
  return undefined;
}
