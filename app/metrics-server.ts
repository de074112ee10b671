// /metrics, /health and /ready on METRICS_PORT for a process without the API's HTTP server (Prometheus scrapes it,
// Kubernetes probes it).
import { createServer, type Server } from "node:http";
import type { Logger } from "../pipeline/runtime/logger.ts";
import { healthBody, type Metrics, type StoreReplica } from "../pipeline/runtime/metrics.ts";

export async function startMetricsServer(opts: { host: string; port: number; metrics: Metrics; ready: () => Promise<boolean>; log: Logger; storeReplicas?: () => StoreReplica[] }): Promise<Server> {
  const { metrics, log } = opts;
  const server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    const reply = (status: number, type: string, body: string) => {
      res.writeHead(status, { "content-type": type });
      res.end(body);
    };
    const json = (status: number, body: unknown) => reply(status, "application/json", JSON.stringify(body));
    const answer = async () => {
      if (req.method !== "GET") return json(405, { status: "method not allowed" });
      if (path === "/metrics") return reply(200, metrics.contentType, await metrics.text());
      if (path === "/health") return json(200, healthBody(opts.storeReplicas?.()));
      if (path === "/ready") {
        const ok = await opts.ready().catch(() => false);
        return json(ok ? 200 : 503, { status: ok ? "ready" : "not ready" });
      }
      return json(404, { status: "not found" });
    };
    answer().catch((err: unknown) => {
      log.warn({ err: (err as Error).message, path }, "metrics request failed");
      if (!res.headersSent) json(500, { status: "error" });
      else res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port, opts.host, () => resolve());
  });
  log.info({ address: server.address() }, "metrics listening");
  return server;
}
