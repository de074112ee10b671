// The extract-json stage: the rules provider's pages/s over the whole PostgreSQL 15 manual with a table schema
// (parse + evidence + schema filling, one core), and the embedded crawl of the manual with and without a json format
// (the stage must not slow crawls that do not ask for it).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseHtml } from "../pipeline/convert/parse-html.ts";
import { rulesProvider } from "../pipeline/extract-json/rules.ts";
import { ensurePostgresManual, htmlFiles } from "./corpus.ts";
import { e2e } from "./e2e.ts";

/** A schema for the manual's tables (name / description columns, e.g. Table 8.2 Numeric Types, Table 9.1 ...). */
const TABLE_SCHEMA = {
  type: "object",
  properties: {
    title: { type: "string" },
    rows: { type: "array", items: { type: "object", properties: { name: { type: "string" }, description: { type: "string" } } } },
  },
};

async function rulesThroughput() {
  const dir = ensurePostgresManual();
  const pages = htmlFiles(dir).map((f) => ({ url: `http://127.0.0.1/docs/${f}`, html: readFileSync(join(dir, f), "utf8") }));
  const provider = rulesProvider(parseHtml);
  const one = async () => {
    let withRows = 0;
    let rows = 0;
    for (const p of pages) {
      const r = await provider.json({ url: p.url, html: p.html, markdown: "" }, { schema: TABLE_SCHEMA });
      const n = ((r.data as { rows?: unknown[] }).rows ?? []).length;
      rows += n;
      if (n > 0) withRows++;
    }
    return { withRows, rows };
  };
  await one(); // warm-up
  const passes: number[] = [];
  let counts = { withRows: 0, rows: 0 };
  for (let i = 0; i < 3; i++) {
    const t0 = performance.now();
    counts = await one();
    passes.push((performance.now() - t0) / 1000);
  }
  passes.sort((a, b) => a - b);
  const mb = pages.reduce((n, p) => n + Buffer.byteLength(p.html), 0) / 1e6;
  return { pages: pages.length, mb: +mb.toFixed(1), pagesPerSecond: +(pages.length / (passes[1] as number)).toFixed(1), pagesWithRows: counts.withRows, rows: counts.rows };
}

const rules = await rulesThroughput();
// A/B in one run, interleaved (the machine is shared and noisy): pages/s, and CPU seconds per page of the whole
// process (main thread and worker threads), which the load of other processes moves much less
const plain = await e2e("embedded", "pg", { formats: ["markdown"] });
const json = await e2e("embedded", "pg", { formats: ["markdown", { type: "json", schema: TABLE_SCHEMA }] });
const plainAgain = await e2e("embedded", "pg", { formats: ["markdown"] });
const jsonAgain = await e2e("embedded", "pg", { formats: ["markdown", { type: "json", schema: TABLE_SCHEMA }] });
console.log(JSON.stringify({
  rules,
  crawlWithoutJson: { pages: plain.pages, pagesPerSecond: plain.pagesPerSecond, again: plainAgain.pagesPerSecond, cpuSecondsPerPage: [plain.cpuSecondsPerPage, plainAgain.cpuSecondsPerPage] },
  crawlWithJson: { pages: json.pages, pagesPerSecond: json.pagesPerSecond, again: jsonAgain.pagesPerSecond, cpuSecondsPerPage: [json.cpuSecondsPerPage, jsonAgain.cpuSecondsPerPage] },
}));
