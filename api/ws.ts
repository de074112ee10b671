// WebSocket watch: ws(s)://host/v2/crawl/:id (and /v2/batch/scrape/:id). Sends a `catchup` frame with every stored
// document, then a `document` frame per new page, then closes 1000 with reason {"type":"done"}. The key may come as
// `Authorization: Bearer` or as the only subprotocol, which is echoed. Events come from crawl.events through the hub,
// subscribed before the catchup is read, so no page falls between the two.
import type { IncomingMessage, Server } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocketServer, type WebSocket } from "ws";
import type { CrawlEvent } from "../schemas/index.ts";
import type { Logger } from "../pipeline/runtime/logger.ts";
import type { Clock } from "../pipeline/runtime/clock.ts";
import type { CrawlStore } from "../pipeline/store/crawl-store.ts";
import { expiresAtOf } from "../pipeline/usecases/crawl-status.ts";
import type { TeamAccess } from "../pipeline/usecases/team-access.ts";
import { authenticate, clientAddress, TEAM_BYPASS } from "./auth.ts";
import { HttpError } from "./errors.ts";
import type { EventHub } from "./event-hub.ts";

const PATH = /^\/v2\/(?:crawl|batch\/scrape)\/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\/?$/i;
const DONE = JSON.stringify({ type: "done" });
const TERMINAL = new Set(["crawl.completed", "crawl.failed", "crawl.cancelled"]);

/** The team of a watcher: from `Authorization: Bearer` or the only subprotocol (how the JS SDK sends its key). */
async function watcherTeam(access: TeamAccess | undefined, req: IncomingMessage, trustProxy: boolean): Promise<string> {
  if (!access) return TEAM_BYPASS;
  const protocol = String(req.headers["sec-websocket-protocol"] ?? "").split(",")[0]?.trim();
  const header = req.headers.authorization ?? (protocol ? `Bearer ${protocol}` : undefined);
  const forwarded = req.headers["x-forwarded-for"];
  const address = clientAddress(req.socket.remoteAddress, Array.isArray(forwarded) ? forwarded.join(",") : forwarded, trustProxy);
  return (await authenticate(access, header, address)).teamId;
}

export function attachWatch(server: Server, deps: { store: CrawlStore; hub: EventHub; clock: Clock; log: Logger; access?: TeamAccess; trustProxy?: boolean }): WebSocketServer {
  const log = deps.log.child({ component: "ws" });
  // echo the offered subprotocol (the JS SDK offers its API key as the only one; browsers abort otherwise)
  const wss = new WebSocketServer({ noServer: true, handleProtocols: (protocols) => protocols.values().next().value ?? false });

  server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    if (!/^\/v2\/(crawl|batch\/scrape)\//.test(path)) {
      socket.end("HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n");
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      const id = PATH.exec(path)?.[1];
      watcherTeam(deps.access, req, deps.trustProxy ?? false).then((teamId) => watch(ws, id, teamId)).catch((err) => {
        if (err instanceof HttpError) {
          ws.close(1008, JSON.stringify({ type: "error", error: err.message }));
          return;
        }
        log.error({ err, crawlId: id }, "watch failed");
        ws.close(1011, JSON.stringify({ type: "error", error: "unexpected error" }));
      });
    });
  });

  async function watch(ws: WebSocket, crawlId: string | undefined, teamId: string): Promise<void> {
    if (!crawlId) {
      ws.close(1008, JSON.stringify({ type: "error", error: "Job not found" }));
      return;
    }
    const buffered: CrawlEvent[] = [];
    let live: ((e: CrawlEvent) => void) | null = null;
    const unsubscribe = deps.hub.subscribe(crawlId, (e) => (live ? live(e) : buffered.push(e)));
    ws.on("close", unsubscribe);
    const crawl = await deps.store.getCrawl(crawlId);
    if (!crawl || crawl.teamId !== teamId) {
      unsubscribe();
      ws.close(1008, JSON.stringify({ type: "error", error: "Job not found" }));
      return;
    }
    const docs: string[] = [];
    let next = 0;
    for (;;) {
      const page = await deps.store.pageDocuments(crawlId, next, 64 * 1024 * 1024, 1000);
      docs.push(...page.docs);
      next = page.nextSkip;
      if (!page.more) break;
    }
    const now = deps.clock.now();
    const head = {
      success: crawl.status !== "failed",
      status: crawl.status,
      total: crawl.total,
      completed: crawl.completed,
      creditsUsed: crawl.creditsUsed,
      expiresAt: new Date(expiresAtOf(crawl, now)).toISOString(),
    };
    // the catchup never shows more documents than `completed` (the sink stores a page before the frontier counts
    // it); stored documents past that follow at once as document frames, as they would have live
    const counted = Math.min(docs.length, Math.max(0, crawl.completed));
    ws.send(`{"type":"catchup","data":${JSON.stringify(head).slice(0, -1)},"data":[${docs.slice(0, counted).join(",")}]}}`);
    for (const doc of docs.slice(counted)) ws.send(`{"type":"document","data":${doc}}`);
    if (crawl.status !== "scraping") {
      unsubscribe();
      ws.close(1000, DONE);
      return;
    }
    const onEvent = (e: CrawlEvent) => {
      if (ws.readyState !== ws.OPEN) return;
      if (e.type === "crawl.page" && e.document && (e.seq ?? 0) >= next) {
        next = (e.seq ?? next) + 1;
        ws.send(JSON.stringify({ type: "document", data: e.document }));
      } else if (TERMINAL.has(e.type)) {
        unsubscribe();
        ws.close(1000, DONE);
      }
    };
    live = onEvent;
    for (const e of buffered.splice(0)) onEvent(e);
  }

  return wss;
}
