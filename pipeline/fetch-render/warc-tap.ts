// Web archives in fetch-render: a job run with `warc: true` has every request of a page fetch (each redirect hop,
// each attempt, error pages too), of its sitemaps and of its hosts' robots.txt written as WARC records before the
// page goes on (the records are on disk before the fetch task's offset can be committed: a replay writes them again,
// and the CDXJ index lists the URL once).
import type { FetchTask } from "../../schemas/index.ts";
import { errorMessage, InfrastructureError } from "../runtime/errors.ts";
import type { Logger } from "../runtime/logger.ts";
import type { ExchangeContext } from "../store/warc/exchange-records.ts";
import type { HttpExchange } from "../store/warc/http-exchange.ts";
import type { WarcArchive } from "../store/warc/warc-archive.ts";
import type { Fetcher } from "./fetcher.ts";
import { GateWaitAborted } from "./politeness.ts";
import type { RobotsCache } from "./robots.ts";

export class WarcTap {
  private readonly archive: WarcArchive;
  private readonly robots: RobotsCache;
  private readonly log: Logger;

  constructor(archive: WarcArchive, robots: RobotsCache, log: Logger) {
    this.archive = archive;
    this.robots = robots;
    this.log = log.child({ component: "warc" });
  }

  /**
   * Runs `run` with a capture, then archives what it captured, whether it succeeded or failed, and the robots.txt of
   * the URL's origin when this crawl's writer has not archived it yet. Archive failures are infrastructure failures:
   * they throw (the task is retried, not acknowledged without its records).
   */
  async around<T>(task: FetchTask, role: "page" | "sitemap", run: (capture: (e: HttpExchange) => void) => Promise<T>): Promise<T> {
    const captured: HttpExchange[] = [];
    let result: T;
    try {
      result = await run((e) => captured.push(e));
    } catch (err) {
      // a task given up before its first request (its crawl ended while it waited for its host's turn) archives nothing
      if (captured.length > 0 || !(err instanceof GateWaitAborted)) await this.write(task, role, captured);
      throw err;
    }
    await this.write(task, role, captured);
    return result;
  }

  /** A fetcher whose every request is captured into `into` (sitemaps). */
  static capturing(fetcher: Fetcher, capture: (e: HttpExchange) => void): Fetcher {
    return { fetch: (req) => fetcher.fetch({ ...req, capture }), close: () => fetcher.close() };
  }

  private async write(task: FetchTask, role: "page" | "sitemap", captured: HttpExchange[]): Promise<void> {
    const { crawlId } = task;
    try {
      await this.archive.own(crawlId, { teamId: task.teamId ?? "", kind: task.options.kind ?? "crawl" });
      // the robots.txt the job obeyed (a job that ignores robots.txt read none)
      const robots = task.options.ignoreRobotsTxt ? null : await this.robots.get(task.url).catch(() => null);
      if (robots?.exchanges?.length) await this.archive.archiveRobots(crawlId, new URL(task.url).origin, robots.exchanges);
      const records = captured.map((exchange) => ({ exchange, context: contextOf(task, role, exchange) }));
      await this.archive.archive(records, crawlId);
    } catch (err) {
      this.log.warn({ crawlId, urlKey: task.urlKey, err: errorMessage(err) }, "web archive write failed; will retry");
      throw new InfrastructureError("STORE_UNAVAILABLE", `web archive write failed: ${errorMessage(err)}`, err);
    }
  }
}

function contextOf(task: FetchTask, role: "page" | "sitemap", exchange: HttpExchange): ExchangeContext {
  const redirect = exchange.statusCode >= 300 && exchange.statusCode < 400 && exchange.headers.some(([n]) => n.toLowerCase() === "location");
  return { crawlId: task.crawlId, depth: task.depth, role: redirect ? "redirect" : role, ...(task.via ? { referrer: task.via } : {}) };
}
