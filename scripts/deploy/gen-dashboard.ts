// Writes deploy/grafana-dashboard.json: the Trawl dashboard over the /metrics series (npm run gen:dashboard).
// Kept as code so every panel's query names a metric that pipeline/runtime/metrics.ts defines (tested).
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

export const DASHBOARD_PATH = fileURLToPath(new URL("../../deploy/grafana-dashboard.json", import.meta.url));

interface Panel { title: string; unit: string; exprs: [string, string][]; description?: string }

const PANELS: Panel[] = [
  { title: "Pages fetched / s by outcome", unit: "ops", exprs: [["sum by (outcome) (rate(trawl_pages_fetched_total[5m]))", "{{outcome}}"]] },
  { title: "Pages converted / s by outcome", unit: "ops", exprs: [["sum by (outcome) (rate(trawl_pages_converted_total[5m]))", "{{outcome}}"]] },
  { title: "Documents stored / s by outcome", unit: "ops", exprs: [["sum by (outcome) (rate(trawl_pages_stored_total[5m]))", "{{outcome}}"]] },
  { title: "Fetch latency (p50, p95, p99)", unit: "s", exprs: [
    ["histogram_quantile(0.5, sum by (le) (rate(trawl_fetch_duration_seconds_bucket{outcome=\"ok\"}[5m])))", "p50"],
    ["histogram_quantile(0.95, sum by (le) (rate(trawl_fetch_duration_seconds_bucket{outcome=\"ok\"}[5m])))", "p95"],
    ["histogram_quantile(0.99, sum by (le) (rate(trawl_fetch_duration_seconds_bucket{outcome=\"ok\"}[5m])))", "p99"],
  ] },
  { title: "Fetched bytes / s and median page size", unit: "bytes", exprs: [
    ["sum(rate(trawl_fetch_bytes_sum[5m]))", "bytes/s"],
    ["histogram_quantile(0.5, sum by (le) (rate(trawl_fetch_bytes_bucket[5m])))", "median page"],
  ] },
  { title: "Consumer lag by topic", unit: "short", description: "Alert when a stage's lag grows for 15 minutes: scale that role", exprs: [["max by (topic, group, partition) (trawl_consumer_lag) ", "{{topic}} p{{partition}}"]] },
  { title: "Webhook attempts / s by result", unit: "ops", exprs: [["sum by (result) (rate(trawl_webhook_attempts_total[5m]))", "{{result}}"]] },
  { title: "Crawls started and ended / min", unit: "short", exprs: [
    ["sum(rate(trawl_crawls_started_total[5m])) * 60", "started"],
    ["sum by (status) (rate(trawl_crawls_ended_total[5m])) * 60", "{{status}}"],
  ] },
  { title: "Running crawls", unit: "short", description: "From the store, reported by each frontier replica (max, not sum)", exprs: [["max(trawl_crawls_running)", "running"]] },
  { title: "Render pool: pages in use and pool size", unit: "short", description: "In use at the pool size for long: scale the render role (RENDER_CONCURRENCY per replica)", exprs: [
    ["sum by (role) (trawl_render_pages_in_use)", "in use ({{role}})"],
    ["sum by (role) (trawl_render_pool_size)", "pool size ({{role}})"],
  ] },
  { title: "Render time (p50, p95) and rendered pages / s", unit: "s", exprs: [
    ["histogram_quantile(0.5, sum by (le) (rate(trawl_render_duration_seconds_bucket{outcome=\"ok\"}[5m])))", "p50"],
    ["histogram_quantile(0.95, sum by (le) (rate(trawl_render_duration_seconds_bucket{outcome=\"ok\"}[5m])))", "p95"],
    ["sum by (outcome) (rate(trawl_render_duration_seconds_count[5m]))", "pages/s {{outcome}}"],
  ] },
  { title: "Browser restarts / h and refused browser requests / s", unit: "short", description: "Restarts: a browser crashed, hung or exited and was replaced (alert when it keeps happening)", exprs: [
    ["sum by (role) (increase(trawl_browser_restarts_total[1h]))", "restarts/h ({{role}})"],
    ["sum by (reason) (rate(trawl_render_refused_requests_total[5m]))", "refused/s {{reason}}"],
  ] },
  { title: "Credits used / h", unit: "short", exprs: [["sum(rate(trawl_credits_used_total[1h])) * 3600", "credits"]] },
  { title: "CPU by role", unit: "percentunit", exprs: [["sum by (role) (rate(process_cpu_seconds_total[5m]))", "{{role}}"]] },
  { title: "Memory (RSS) by role", unit: "bytes", exprs: [["sum by (role) (process_resident_memory_bytes)", "{{role}}"]] },
  { title: "Event loop lag p99 by role", unit: "s", exprs: [["max by (role) (nodejs_eventloop_lag_p99_seconds)", "{{role}}"]] },
];

export function dashboard(): unknown {
  return {
    title: "Trawl",
    uid: "trawl-overview",
    schemaVersion: 39,
    version: 1,
    editable: true,
    time: { from: "now-6h", to: "now" },
    refresh: "30s",
    tags: ["trawl"],
    templating: { list: [{ name: "datasource", type: "datasource", query: "prometheus", label: "Prometheus" }] },
    panels: PANELS.map((p, i) => ({
      id: i + 1,
      type: "timeseries",
      title: p.title,
      ...(p.description ? { description: p.description } : {}),
      datasource: { type: "prometheus", uid: "${datasource}" },
      gridPos: { h: 8, w: 12, x: (i % 2) * 12, y: Math.floor(i / 2) * 8 },
      fieldConfig: { defaults: { unit: p.unit }, overrides: [] },
      targets: p.exprs.map(([expr, legendFormat], j) => ({ refId: String.fromCharCode(65 + j), expr, legendFormat, datasource: { type: "prometheus", uid: "${datasource}" } })),
    })),
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(DASHBOARD_PATH, JSON.stringify(dashboard(), null, 2) + "\n");
  console.log(`wrote ${DASHBOARD_PATH}`);
}
