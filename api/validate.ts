// ajv errors -> zod-like issues ({code, path, message}) as the anchor reports them.
import { validator, type ErrorObject, type SchemaName } from "../schemas/index.ts";
import { badRequest, type Issue } from "./errors.ts";

export const UNRECOGNIZED_KEYS = "Unrecognized key in body -- please review the v2 API documentation for request body changes";

function toPath(instancePath: string): (string | number)[] {
  return instancePath
    .split("/")
    .slice(1)
    .map((p) => p.replace(/~1/g, "/").replace(/~0/g, "~"))
    .map((p) => (/^\d+$/.test(p) ? Number(p) : p));
}

export function toIssues(errors: ErrorObject[]): Issue[] {
  const issues: Issue[] = [];
  const unknown = new Map<string, string[]>();
  for (const e of errors) {
    if (e.keyword === "additionalProperties") {
      const list = unknown.get(e.instancePath) ?? [];
      list.push(String(e.params.additionalProperty));
      unknown.set(e.instancePath, list);
      continue;
    }
    if (e.keyword === "anyOf" || e.keyword === "oneOf") continue; // the branch errors say more
    const code = e.keyword === "type" ? "invalid_type" : e.keyword === "enum" ? "invalid_enum_value" : e.keyword === "required" ? "invalid_type" : "invalid_value";
    const path = toPath(e.instancePath);
    if (e.keyword === "required") path.push(String(e.params.missingProperty));
    issues.push({ code, path, message: e.keyword === "required" ? "Required" : String(e.message) });
  }
  for (const [path, keys] of unknown) issues.unshift({ code: "unrecognized_keys", keys, path: toPath(path), message: UNRECOGNIZED_KEYS });
  // ajv repeats the same issue for each anyOf branch; keep one of each
  const seen = new Set<string>();
  return issues.filter((i) => {
    const k = JSON.stringify(i);
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

/** Validates a body against a schema of schemas/; throws the anchor's 400 when it does not fit. */
export function validateBody<T>(name: SchemaName, body: unknown): T {
  const validate = validator<T>(name);
  if (validate(body)) return body;
  throw badRequest(toIssues(validate.errors ?? []));
}
