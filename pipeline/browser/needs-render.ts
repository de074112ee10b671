// When a page goes through the browser (RENDER=auto): the request needs one, or the static HTML shows that the page
// is built by scripts. Pure functions of the request and the HTML; cheap enough to run on every static page.

export type RenderMode = "auto" | "always" | "never";

/** The options of a request that only a browser can honour. */
export interface BrowserOptions {
  waitForMs?: number;
  actions?: unknown[];
  screenshot?: unknown;
  mobile?: boolean;
  /** the branding format reads the rendered page's computed styles */
  formats?: readonly string[];
}

/** The option that needs a browser, or null. */
export function browserOption(o: BrowserOptions): string | null {
  if (o.actions && o.actions.length > 0) return "actions";
  if (o.screenshot) return "screenshot";
  if (o.formats?.includes("branding")) return "branding";
  if (o.waitForMs && o.waitForMs > 0) return "waitFor";
  if (o.mobile) return "mobile";
  return null;
}

/** Pages with less visible body text than this, while they load scripts, count as script-built. */
export const MIN_STATIC_TEXT = 50;

const APP_ROOT = /<(div|main|section|app-root)\b[^>]*\bid\s*=\s*["']?(root|app|__next|__nuxt|___gatsby|svelte|q-app)["']?[^>]*>\s*<\/\1\s*>/i;
const ANGULAR_ROOT = /<app-root\b[^>]*>\s*<\/app-root\s*>/i;
const NOSCRIPT_NOTICE = /<noscript\b[^>]*>[^]*?\b(enable|requires?|need|turn on|activate)\b[^]*?javascript[^]*?<\/noscript\s*>/i;
const SCRIPT = /<script\b/i;

/**
 * Why the static HTML looks script-built, or null. The rule, in order:
 * 1. an empty app root (`<div id="root|app|__next|__nuxt|___gatsby">` or `<app-root>` with nothing inside);
 * 2. a `<noscript>` notice asking to enable JavaScript;
 * 3. scripts present and fewer than MIN_STATIC_TEXT characters of visible text in `<body>`.
 */
export function scriptBuilt(html: string): string | null {
  if (!SCRIPT.test(html)) return null; // nothing to run: a browser would show the same page
  if (APP_ROOT.test(html) || ANGULAR_ROOT.test(html)) return "empty app root";
  if (NOSCRIPT_NOTICE.test(html)) return "noscript notice";
  if (visibleTextLength(bodyOf(html), MIN_STATIC_TEXT) < MIN_STATIC_TEXT) return "little text while scripts are present";
  return null;
}

function bodyOf(html: string): string {
  const start = html.search(/<body\b/i);
  return start < 0 ? html : html.slice(start);
}

/** Characters of text outside tags, scripts, styles, templates and noscript, counted up to `enough`. */
export function visibleTextLength(html: string, enough = Number.MAX_SAFE_INTEGER): number {
  const stripped = html.replace(/<(script|style|noscript|template|svg)\b[^]*?<\/\1\s*>/gi, " ").replace(/<!--[^]*?-->/g, " ");
  let n = 0;
  const text = /(?:^|>)([^<]+)/g;
  for (let m = text.exec(stripped); m; m = text.exec(stripped)) {
    n += (m[1] as string).replace(/&[a-z#0-9]+;/gi, "x").replace(/\s+/g, "").length;
    if (n >= enough) return n;
  }
  return n;
}
