// One way to turn a fetched page into a document, shared by the convert stage, POST /v2/scrape and the CLI:
// in the worker pool when there is one (off the event loop, under CONVERT_TIMEOUT_MS and CONVERT_WORKER_HEAP_MB), else
// on this thread.
// Conversion failures become page errors with stable codes.
import { errorMessage, PageError } from "../runtime/errors.ts";
import { convertAny, type ConvertOptions, type Converted, type FetchedPage, type PageAnalyzer } from "./document.ts";
import { ConvertFailedError, ConvertTimeoutError, OUT_OF_MEMORY, type ConvertPool } from "./worker-pool.ts";

export type { ConvertOptions };
export type Converter = (page: FetchedPage, options: ConvertOptions) => Promise<Converted>;

/** analyze: the page analyzer when pages convert on this thread (a pool's workers load their own, by URL) */
export function pageConverter(pool: ConvertPool | null, analyze?: PageAnalyzer): Converter {
  return async (page, options) => {
    try {
      // the browser's artefacts do not go to the worker: they are copied to the document as they are
      const { screenshot, branding, actions, warning, engine, ...rest } = page;
      const converted = pool ? await pool.convert(rest, options) : await convertAny(rest, options, analyze);
      const { document } = converted;
      if (engine) document.metadata.engine = engine;
      if (screenshot) document.screenshot = screenshot;
      if (branding && options.formats.includes("branding")) document.branding = branding;
      if (actions) document.actions = actions;
      if (warning) document.warning = document.warning ? `${document.warning} ${warning}` : warning;
      return converted;
    } catch (err) {
      if (err instanceof ConvertTimeoutError) throw new PageError("SCRAPE_CONVERT_TIMEOUT", errorMessage(err), { cause: err });
      if (err instanceof PageError) throw err;
      if (err instanceof ConvertFailedError && (err.code === "SCRAPE_TOO_LARGE" || err.code === OUT_OF_MEMORY)) throw new PageError(err.code, err.message, { cause: err });
      throw new PageError("SCRAPE_UNPARSEABLE", `could not convert the page: ${errorMessage(err)}`, { cause: err });
    }
  };
}
