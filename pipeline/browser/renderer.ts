// The Renderer port: one page through a real browser (scripts run, then waitFor and actions), as HTML plus the
// artefacts the request asked for. ChromiumRenderer (chromium-renderer.ts) implements it; the fetch-render stage,
// the render role and the single-page scrape use it through this interface only.
import type { Branding } from "../../schemas/index.ts";
import type { HttpExchange } from "../store/warc/http-exchange.ts";

/** A browser action, as Firecrawl v2 names them (`actions` of a scrape). */
export type RenderAction =
  | { type: "wait"; milliseconds?: number; selector?: string }
  | { type: "click"; selector: string; all?: boolean }
  | { type: "write"; text: string }
  | { type: "press"; key: string }
  | { type: "scroll"; direction?: "up" | "down"; selector?: string }
  | { type: "screenshot"; fullPage?: boolean; quality?: number; viewport?: { width: number; height: number } }
  | { type: "scrape" }
  | { type: "executeJavascript"; script: string }
  | { type: "pdf"; landscape?: boolean; scale?: number; format?: string };

export interface ScreenshotSpec {
  fullPage?: boolean;
  /** 1..100: JPEG at this quality; absent: PNG */
  quality?: number;
  viewport?: { width: number; height: number };
}

export interface RenderRequest {
  url: string;
  /** the whole page: navigation, waitFor and actions */
  timeoutMs: number;
  headers?: Record<string, string>;
  /** extra wait after the load event */
  waitForMs?: number;
  actions?: RenderAction[];
  screenshot?: ScreenshotSpec;
  /** the branding format: read the page's brand from its computed styles */
  branding?: boolean;
  /** a phone's viewport, user agent and touch */
  mobile?: boolean;
  /** accept any TLS certificate */
  skipTlsVerification?: boolean;
  /** refuse requests to ad and tracker hosts (default true; the renderer's list) */
  blockAds?: boolean;
  /**
   * The page as the static fetcher already got it (RENDER=auto): the browser's first navigation to `finalUrl` is
   * answered with it instead of asking the site again. Everything else the page loads goes to the network.
   */
  document?: { finalUrl: string; statusCode: number; contentType: string; body: string };
  /** web archives: told each main-frame navigation (every redirect hop) as sent and received */
  capture?: (exchange: HttpExchange) => void;
}

/** Firecrawl's `actions` result of a document. */
export interface ActionResults {
  screenshots: string[];
  scrapes: { url: string; html: string }[];
  javascriptReturns: { type: string; value: unknown }[];
  pdfs: string[];
}

export interface RenderResult {
  url: string;
  finalUrl: string;
  statusCode: number;
  contentType: string;
  /** the DOM as HTML after scripts, waitFor and actions */
  body: string;
  /** the `screenshot` format: a data URL */
  screenshot?: string;
  /** the branding format's profile */
  branding?: Branding;
  actions?: ActionResults;
  /** requests of the page that were refused (private address, scheme, ad host, size) */
  refused?: { url: string; reason: string }[];
}

export interface RendererStatus {
  available: boolean;
  /** why not (no Chromium binary, launch failed) */
  reason?: string;
  executablePath?: string;
}

export interface Renderer {
  render(req: RenderRequest): Promise<RenderResult>;
  status(): RendererStatus;
  close(): Promise<void>;
}

/** Which engine produced a document (`metadata.engine`). */
export type Engine = "fetch" | "chromium";
