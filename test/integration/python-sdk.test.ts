// The official Python SDK (firecrawl-py 4.x, in a virtualenv from scripts/python-sdk.sh) against an embedded Trawl
// on the fixture site: test/sdk/firecrawl_py_check.py calls every method a self-hosted Firecrawl answers.
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFixtureSite, type FixtureSite } from "../fixtures/site.ts";
import { startTrawl, type Instance } from "./harness.ts";

const run = promisify(execFile);

describe("firecrawl-py", () => {
  let trawl: Instance;
  let site: FixtureSite;
  let python: string;
  beforeAll(async () => {
    // installed by .ci/run; idempotent and fast when present
    await run("bash", ["scripts/python-sdk.sh", "install"], { timeout: 180_000 });
    python = (await run("bash", ["scripts/python-sdk.sh", "python"])).stdout.trim();
    [site, trawl] = await Promise.all([startFixtureSite({ delayMs: 20 }), startTrawl({ mode: "embedded" })]);
  });
  afterAll(async () => {
    await trawl?.stop();
    await site?.close();
  });

  it("every supported method works; the report lists each method", async () => {
    const { stdout, stderr, code } = await run(python, ["test/sdk/firecrawl_py_check.py", trawl.api, site.origin], { timeout: 90_000 })
      .then((r) => ({ ...r, code: 0 }))
      .catch((err: { stdout?: string; stderr?: string; code?: number }) => ({ stdout: err.stdout ?? "", stderr: err.stderr ?? "", code: err.code ?? 1 }));
    const report = stdout.trim().split("\n").filter(Boolean).map((l) => JSON.parse(l));
    console.log(report.map((r) => `${r.ok ? "ok  " : "FAIL"} ${r.supported ? "" : "(pending) "}${r.method} ${r.ms} ms: ${r.detail}`).join("\n"));
    expect(report.map((r) => r.method)).toContain("get_queue_status");
    expect(report.filter((r) => r.supported && !r.ok), stderr).toEqual([]);
    expect(code, stderr).toBe(0);
  });
});
