// The branding format's reading of a rendered page: one evaluation in the page that collects computed styles (body,
// headings, text, backgrounds, links, buttons) and the logo, bounded and in document order, then the pure
// brandingProfile (branding.ts) turns them into the profile. A string, not a function: the code runs in the page
// (no DOM types in this project's compilation).
import type { Page } from "playwright-core";
import type { Branding } from "../../schemas/index.ts";
import { errorMessage, PageError } from "../runtime/errors.ts";
import { brandingProfile, type BrandingSample } from "./branding.ts";

/** Elements whose styles are read, in document order (a huge page is sampled by its first ones). */
export const MAX_SAMPLED_ELEMENTS = 5000;
/** An inline svg logo larger than this is left out (it would be a data URL in every document). */
export const MAX_SVG_LOGO_CHARS = 50_000;

const SAMPLER = String.raw`(() => {
  const MAX = ${MAX_SAMPLED_ELEMENTS}, MAX_SVG = ${MAX_SVG_LOGO_CHARS};
  const style = (el) => getComputedStyle(el);
  const visible = (el) => {
    const s = style(el);
    return s.display !== "none" && s.visibility !== "hidden" && Number(s.opacity) > 0 && el.getClientRects().length > 0;
  };
  const textStyle = (el) => { if (!el) return undefined; const s = style(el); return { fontFamily: s.fontFamily, fontSize: s.fontSize, lineHeight: s.lineHeight }; };
  const first = (sel) => { for (const el of document.querySelectorAll(sel)) if (visible(el)) return el; return undefined; };
  const body = document.body || document.documentElement;
  const bs = style(body);
  const out = {
    html: { background: style(document.documentElement).backgroundColor },
    body: { background: bs.backgroundColor, color: bs.color, fontFamily: bs.fontFamily, fontSize: bs.fontSize, lineHeight: bs.lineHeight },
    headings: {}, text: [], backgrounds: [], links: [], buttons: [], meta: {},
  };
  for (const h of ["h1", "h2", "h3"]) { const el = first(h); if (el) out.headings[h] = textStyle(el); }
  const p = first("p"); if (p) out.paragraph = { fontFamily: style(p).fontFamily };
  const small = first("small"); if (small) out.small = { fontSize: style(small).fontSize };
  const code = first("code, pre, kbd, samp"); if (code) out.code = { fontFamily: style(code).fontFamily };
  const text = new Map(), bgs = new Map();
  const SKIP = new Set(["SCRIPT", "STYLE", "NOSCRIPT", "TEMPLATE", "HEAD", "TITLE", "META", "LINK"]);
  let n = 0;
  for (const el of body.querySelectorAll("*")) {
    if (++n > MAX) break;
    if (SKIP.has(el.tagName) || !visible(el)) continue;
    const s = style(el);
    let chars = 0;
    for (const node of el.childNodes) if (node.nodeType === 3) chars += node.textContent.replace(/\s+/g, "").length;
    if (chars > 0) { const k = s.color + "|" + s.fontFamily; const t = text.get(k); if (t) t.chars += chars; else text.set(k, { color: s.color, fontFamily: s.fontFamily, chars }); }
    const r = el.getBoundingClientRect();
    if (s.backgroundColor && r.width * r.height > 0) bgs.set(s.backgroundColor, (bgs.get(s.backgroundColor) || 0) + Math.round(r.width * r.height));
  }
  out.text = [...text.values()];
  out.backgrounds = [...bgs].map(([color, area]) => ({ color, area }));
  for (const a of document.querySelectorAll("a[href]")) {
    if (out.links.length >= MAX) break;
    if (visible(a)) out.links.push(style(a).color);
  }
  const BUTTONS = "button, input[type=submit], input[type=button], [role=button], a.btn, a.button, .btn, .button";
  for (const b of document.querySelectorAll(BUTTONS)) {
    if (out.buttons.length >= 100) break;
    if (!visible(b)) continue;
    const s = style(b);
    out.buttons.push({ background: s.backgroundColor, color: s.color, borderColor: s.borderTopColor, borderWidth: s.borderTopWidth, borderRadius: s.borderRadius });
  }
  // the logo: an img or svg with "logo" in its class, id, alt or src (or in those of a near ancestor), else the first
  // in the header or banner
  const mentions = (el) => { for (let e = el, i = 0; e && i < 3; e = e.parentElement, i++) { const s = [e.id, e.getAttribute("class"), e.getAttribute("alt"), e.getAttribute("src"), e.getAttribute("aria-label")].join(" "); if (/logo/i.test(s)) return true; } return false; };
  const images = [...document.querySelectorAll("img, svg")].filter((el) => !(el.tagName.toLowerCase() === "svg" && el.parentElement && el.parentElement.closest("svg")) && visible(el));
  const logoEl = images.find(mentions) || images.find((el) => el.closest("header, [role=banner]"));
  if (logoEl) {
    if (logoEl.tagName.toLowerCase() === "img") {
      const src = logoEl.currentSrc || logoEl.src;
      if (src) out.logo = { src, alt: logoEl.getAttribute("alt") || undefined };
    } else {
      const svg = logoEl.outerHTML;
      if (svg.length <= MAX_SVG) out.logo = { src: "data:image/svg+xml;base64," + btoa(unescape(encodeURIComponent(svg))), alt: logoEl.getAttribute("aria-label") || undefined };
    }
  }
  const meta = (sel) => { const el = document.querySelector(sel); const v = el && el.getAttribute("content"); return v ? v.trim() : undefined; };
  const abs = (u) => { try { return u ? new URL(u, document.baseURI).href : undefined; } catch { return undefined; } };
  out.meta.ogImage = abs(meta('meta[property="og:image"], meta[name="og:image"]'));
  out.meta.siteName = meta('meta[property="og:site_name"]');
  out.meta.applicationName = meta('meta[name="application-name"]');
  const icon = [...document.querySelectorAll("link[rel]")].find((l) => l.relList.contains("icon"));
  out.meta.favicon = icon ? abs(icon.getAttribute("href")) : undefined;
  return out;
})()`;

/**
 * The branding profile of the page as it is now. The page's own scripts run in the same world and may break the
 * reading (replace getComputedStyle, navigate away): that fails the page with a page error, never as a bug; a browser
 * that went away is left to the renderer's retry.
 */
export async function brandingOf(page: Page): Promise<Branding> {
  let sample: BrandingSample;
  try {
    sample = (await page.evaluate(SAMPLER)) as BrandingSample;
  } catch (err) {
    if (/closed|crash/i.test(errorMessage(err))) throw err;
    throw new PageError("SCRAPE_SITE_ERROR", `the page's branding could not be read: ${errorMessage(err).replace(/^page\.evaluate: /, "").split("\n")[0]}`, { cause: err });
  }
  try {
    return brandingProfile(sample);
  } catch (err) {
    throw new PageError("SCRAPE_SITE_ERROR", `the page's branding could not be read: ${errorMessage(err)}`, { cause: err });
  }
}
