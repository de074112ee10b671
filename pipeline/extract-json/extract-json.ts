// extract-json stage: pages.extract -> crawl.pages. Adds json / summary to the converted page's document (the rules
// or the llm provider) and hands the page on to the sink. A failed extraction never drops the page: it goes on with
// metadata.error and a warning (extractInto catches provider failures; onPageFailure covers the rest).
import type { CrawlPage, PageExtract } from "../../schemas/index.ts";
import type { Consumed, Emission, Processor } from "../runtime/bus.ts";
import { errorCode, errorMessage } from "../runtime/errors.ts";
import type { Logger } from "../runtime/logger.ts";
import { keys } from "../topology.ts";
import { extractInto, extractionCredits } from "./extract-page.ts";
import type { JsonProvider } from "./provider.ts";
import { precomputedRules } from "./rules.ts";
import { DeclaredProcessor } from "../runtime/declared-processor.ts";

export { JSON_FORMAT_CREDITS } from "./extract-page.ts";

export class ExtractJsonProcessor extends DeclaredProcessor implements Processor<PageExtract, void> {
  readonly mode = "parallel" as const;
  readonly concurrency: number;
  private readonly provider: JsonProvider;
  private readonly log: Logger;

  constructor(deps: { provider: JsonProvider; log: Logger; concurrency: number }) {
    super("extract-json");
    this.provider = deps.provider;
    this.log = deps.log.child({ component: "extract-json" });
    this.concurrency = deps.concurrency;
  }

  createBatch(): void {}

  async handle(msg: Consumed<PageExtract>): Promise<Emission[]> {
    const page = msg.value;
    const document = page.document;
    const input = { url: String(document.metadata.url), html: page.html ?? "", markdown: document.markdown ?? page.markdown ?? "" };
    // the rules result computed in the convert worker, when it came with the page: no second parse here
    const provider = precomputedRules(this.provider, page.rules);
    await extractInto(document, input, page.extract, provider, this.log.child({ crawlId: page.crawlId, urlKey: page.urlKey }));
    const credits = extractionCredits(page.credits, page.extract);
    document.metadata.creditsUsed = credits;
    return [this.onward(page, document, credits)];
  }

  /** A bug while extracting: the page is still stored, without json/summary, with the error. */
  onPageFailure(msg: Consumed<PageExtract>, err: unknown): Emission[] {
    const page = msg.value;
    const document = { ...page.document, metadata: { ...page.document.metadata, error: `extraction failed (${errorCode(err)}): ${errorMessage(err)}` } };
    return [this.onward(page, document, page.credits)];
  }

  private onward(page: PageExtract, document: CrawlPage["document"], credits: number): Emission {
    const value: CrawlPage = {
      crawlId: page.crawlId, urlKey: page.urlKey, credits, document, ...(page.finalUrlKey ? { finalUrlKey: page.finalUrlKey } : {}),
      ...(page.kind ? { kind: page.kind } : {}), ...(page.teamId ? { teamId: page.teamId } : {}),
    };
    return { topic: "crawl.pages", key: keys.crawl(page.crawlId), value };
  }
}
