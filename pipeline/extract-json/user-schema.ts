// JSON Schemas sent by callers (formats [{type:"json", schema}], /v2/extract): compiled with ajv once per distinct
// schema, so that a bad schema is refused at submit with ajv's own words and the output is validated before storing.
import { Ajv, type ValidateFunction } from "ajv";
import addFormatsModule from "ajv-formats";

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

const ajv = new Ajv({ allErrors: true, strict: false, validateSchema: true });
addFormats(ajv);

const compiled = new Map<string, ValidateFunction>();
const MAX_CACHED = 500;

export class InvalidSchemaError extends Error {}

/** The validator of a caller's schema; InvalidSchemaError says what is wrong with it. */
export function compileUserSchema(schema: unknown): ValidateFunction {
  const key = JSON.stringify(schema);
  let fn = compiled.get(key);
  if (fn) return fn;
  if (!schema || typeof schema !== "object" || Array.isArray(schema)) throw new InvalidSchemaError("schema must be a JSON Schema object");
  const copy = structuredClone(schema) as Record<string, unknown>;
  delete copy.$id;
  delete copy.$schema;
  try {
    fn = ajv.compile(copy);
  } catch (err) {
    throw new InvalidSchemaError(`invalid JSON Schema: ${(err as Error).message}`);
  }
  if (compiled.size >= MAX_CACHED) compiled.clear();
  compiled.set(key, fn);
  return fn;
}

/** ajv's errors as one line: `/items/0/price must be number; must have required property 'name'` */
export function validationErrors(fn: ValidateFunction): string {
  return (fn.errors ?? []).map((e) => `${e.instancePath || "/"} ${e.message ?? e.keyword}`).join("; ");
}
