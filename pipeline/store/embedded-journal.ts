// The line formats of the embedded crawl store's files (journal.jsonl, documents/*.jsonl) and small readers of them.
import { stat } from "node:fs/promises";
import type { CrawlRecord, DeliveryRow, ErrorRow, UrlRow } from "./crawl-store.ts";

/** One line of journal.jsonl. A crawl record written by an earlier release may lack `tokensUsed` (read as 0). */
export type JournalEntry =
  | { t: "crawl"; r: CrawlRecord }
  | { t: "cancel"; id: string; at: number }
  | { t: "urls"; rows: UrlRow[] }
  | { t: "errors"; rows: ErrorRow[] }
  | { t: "deliveries"; rows: DeliveryRow[] }
  | { t: "idem"; team: string; key: string; at: number };

export function journalCrawlId(e: JournalEntry): string {
  if (e.t === "crawl") return e.r.crawlId;
  if (e.t === "idem") return "";
  if (e.t === "cancel") return e.id;
  return e.rows[0]?.crawlId ?? "";
}

/** Bytes in a file, 0 when it does not exist. */
export const sizeOf = (path: string): Promise<number> => stat(path).then((st) => st.size, () => 0);
