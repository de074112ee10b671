// Validates a compose file against the Compose Specification's JSON Schema, vendored in deploy/schemas/
// (from github.com/compose-spec/compose-spec, schema/compose-spec.json; see deploy/schemas/SOURCE).
// YAML anchors and merge keys are resolved first, as Compose does.
import { readFileSync } from "node:fs";
import { Ajv } from "ajv";
import addFormats from "ajv-formats";
import { parse } from "yaml";

const file = process.argv[2] ?? "deploy/compose.yaml";
const schema = JSON.parse(readFileSync(new URL("../../deploy/schemas/compose-spec.json", import.meta.url), "utf8"));
// the file names its draft as https://json-schema.org/draft-07/schema, Ajv knows draft-07 by its http:// id
if (schema.$schema !== "https://json-schema.org/draft-07/schema") throw new Error(`unexpected $schema ${schema.$schema}`);
delete schema.$schema;
const ajv = new Ajv({ allErrors: true, strict: false });
addFormats.default(ajv);
const validate = ajv.compile(schema);
const doc = parse(readFileSync(file, "utf8"), { merge: true });
if (!validate(doc)) {
  for (const e of validate.errors ?? []) console.error(`${file}: ${e.instancePath || "/"} ${e.message} ${JSON.stringify(e.params)}`);
  process.exit(1);
}
const services = Object.keys((doc as { services: Record<string, unknown> }).services);
console.log(`${file}: valid against the Compose Specification (${services.length} services: ${services.join(", ")})`);
