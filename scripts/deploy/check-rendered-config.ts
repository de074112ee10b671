// Reads `helm template` output on stdin and checks that the chart's ConfigMap and Secret together carry exactly the
// variables of the configuration table (pipeline/runtime/config.ts), the secret ones in the Secret only.
import { readFileSync } from "node:fs";
import { parseAllDocuments } from "yaml";
import { configVars } from "../../pipeline/runtime/config.ts";

interface Manifest { kind?: string; metadata?: { name?: string }; data?: Record<string, string>; stringData?: Record<string, string> }

const docs = parseAllDocuments(readFileSync(0, "utf8")).map((d) => d.toJS() as Manifest | null).filter((d): d is Manifest => !!d);
const configMap = docs.find((d) => d.kind === "ConfigMap" && d.metadata?.name?.endsWith("-config"));
const secret = docs.find((d) => d.kind === "Secret");
const problems: string[] = [];
if (!configMap) problems.push("no ConfigMap *-config rendered");
const plain = Object.keys(configMap?.data ?? {});
const secretKeys = Object.keys(secret?.stringData ?? {});
const specs = Object.values(configVars) as { env: string; secret?: boolean }[];
for (const s of specs) {
  const where = s.secret ? secretKeys : plain;
  if (!where.includes(s.env)) problems.push(`${s.env} missing from the ${s.secret ? "Secret" : "ConfigMap"}`);
  if (s.secret && plain.includes(s.env)) problems.push(`${s.env} is a secret but is in the ConfigMap`);
}
const known = new Set(specs.map((s) => s.env));
for (const k of [...plain, ...secretKeys]) if (!known.has(k)) problems.push(`${k} is rendered but is not in the configuration table`);
if (problems.length) {
  console.error(problems.join("\n"));
  process.exit(1);
}
console.log(`rendered ConfigMap (${plain.length}) + Secret (${secretKeys.length}) = the ${specs.length} variables of the configuration table`);
