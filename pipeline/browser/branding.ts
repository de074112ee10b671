// The branding format (Firecrawl v2): a rendered page's brand as the official SDKs' BrandingProfile, built from what
// the in-page sampler (branding-sampler.ts) read of the computed styles. Pure and deterministic: the same sample
// gives the same profile; ties are broken by first appearance in document order.
import type { Branding } from "../../schemas/index.ts";

/** What the sampler reads in the page (computed style values as Chromium writes them, absolute URLs). */
export interface BrandingSample {
  html: { background: string };
  body: TextStyle & { background: string; color: string };
  headings: Partial<Record<"h1" | "h2" | "h3", TextStyle>>;
  paragraph?: { fontFamily: string };
  small?: { fontSize: string };
  code?: { fontFamily: string };
  /** visible text per colour and font stack, in characters, in order of first appearance */
  text: { color: string; fontFamily: string; chars: number }[];
  /** painted backgrounds, in px², in order of first appearance */
  backgrounds: { color: string; area: number }[];
  /** visible links' colours, in document order */
  links: string[];
  /** visible buttons, in document order */
  buttons: { background: string; color: string; borderColor: string; borderWidth: string; borderRadius: string }[];
  logo?: { src: string; alt?: string };
  meta: { ogImage?: string; siteName?: string; applicationName?: string; favicon?: string };
}

interface TextStyle {
  fontFamily: string;
  fontSize: string;
  lineHeight: string;
}

export interface Rgba {
  r: number;
  g: number;
  b: number;
  a: number;
}

/** A colour counts when at least this opaque (a faint overlay is not the brand's colour). */
const MIN_ALPHA = 0.5;
/** Below this relative luminance, white text contrasts more than black (WCAG contrast ratios are equal at 0.179). */
export const DARK_LUMINANCE = 0.179;
/** A colour with less chroma than this (max - min channel, 0..1) is a grey: a neutral, not a brand colour. */
const MIN_CHROMA = 0.15;

/** A computed colour (`rgb()`, `rgba()`, space syntax, `#hex`, `transparent`), or null for what it cannot read. */
export function parseColor(value: string): Rgba | null {
  const s = value.trim().toLowerCase();
  if (s === "transparent") return { r: 0, g: 0, b: 0, a: 0 };
  const hex = /^#([0-9a-f]{3}|[0-9a-f]{6})$/.exec(s)?.[1];
  if (hex) {
    const full = hex.length === 3 ? [...hex].map((c) => c + c).join("") : hex;
    return { r: parseInt(full.slice(0, 2), 16), g: parseInt(full.slice(2, 4), 16), b: parseInt(full.slice(4, 6), 16), a: 1 };
  }
  const m = /^rgba?\(\s*([\d.]+)[\s,]+([\d.]+)[\s,]+([\d.]+)(?:\s*[,/]\s*([\d.]+)(%)?)?\s*\)$/.exec(s);
  if (!m) return null;
  const channel = (v: string | undefined) => Math.max(0, Math.min(255, Math.round(Number(v))));
  const a = m[4] === undefined ? 1 : Number(m[4]) / (m[5] ? 100 : 1);
  return { r: channel(m[1]), g: channel(m[2]), b: channel(m[3]), a: Math.max(0, Math.min(1, a)) };
}

/** `#RRGGBB` (upper case, as Firecrawl writes colours). */
export const toHex = (c: Rgba): string => `#${[c.r, c.g, c.b].map((v) => v.toString(16).padStart(2, "0")).join("").toUpperCase()}`;

/** The colour as #RRGGBB when it is opaque enough to count, else undefined. */
export function solidHex(value: string | undefined): string | undefined {
  const c = value === undefined ? null : parseColor(value);
  return c && c.a >= MIN_ALPHA ? toHex(c) : undefined;
}

/** WCAG 2 relative luminance, 0 (black) .. 1 (white). */
export function luminance(c: Rgba): number {
  const lin = (v: number) => {
    const s = v / 255;
    return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * lin(c.r) + 0.7152 * lin(c.g) + 0.0722 * lin(c.b);
}

/** Not a grey: some hue to it. */
export function chromatic(hex: string): boolean {
  const c = parseColor(hex);
  if (!c) return false;
  return (Math.max(c.r, c.g, c.b) - Math.min(c.r, c.g, c.b)) / 255 >= MIN_CHROMA;
}

/** Keys by total weight, heaviest first; equal weights keep their order of first appearance. */
export function rank(entries: readonly { key: string | undefined; weight: number }[]): string[] {
  const totals = new Map<string, number>();
  for (const { key, weight } of entries) if (key !== undefined) totals.set(key, (totals.get(key) ?? 0) + weight);
  // Map keeps insertion order and Array.prototype.sort is stable
  return [...totals].sort((a, b) => b[1] - a[1]).map(([key]) => key);
}

/** A CSS font-family list as its families, unquoted. */
export function fontStack(value: string): string[] {
  return value.split(",").map((f) => f.trim().replace(/^(["'])(.*)\1$/, "$2").trim()).filter(Boolean);
}

const GENERIC = new Set(["serif", "sans-serif", "monospace", "cursive", "fantasy", "system-ui", "ui-serif", "ui-sans-serif", "ui-monospace", "ui-rounded", "math", "emoji", "fangsong", "-apple-system", "blinkmacsystemfont", "inherit", "initial"]);

/** The first family of a stack that names a font (not a generic family), else the first one. */
function namedFamily(stack: string): string | undefined {
  const families = fontStack(stack);
  return families.find((f) => !GENERIC.has(f.toLowerCase())) ?? families[0];
}

/** line-height / font-size, to two decimals; "normal" or unreadable: undefined. */
function lineHeightRatio(style: TextStyle | undefined): number | undefined {
  if (!style) return undefined;
  const lh = Number.parseFloat(style.lineHeight);
  const fs = Number.parseFloat(style.fontSize);
  if (!/px$/.test(style.lineHeight) || !(lh > 0) || !(fs > 0)) return undefined;
  return Math.round((lh / fs) * 100) / 100;
}

/** Drops undefined values; an object left empty is undefined. */
function compact<T extends Record<string, unknown>>(o: T): T | undefined {
  const out = Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
  return Object.keys(out).length ? out : undefined;
}

type Button = BrandingSample["buttons"][number];

function buttonStyle(b: Button | undefined): NonNullable<NonNullable<Branding["components"]>["buttonPrimary"]> | undefined {
  if (!b) return undefined;
  return compact({
    background: solidHex(b.background),
    textColor: solidHex(b.color),
    borderColor: Number.parseFloat(b.borderWidth) > 0 ? solidHex(b.borderColor) : undefined,
    borderRadius: b.borderRadius || undefined,
  });
}

/**
 * The profile. The rules (docs/api.md):
 * - background: body's background, else the root's, else white; colorScheme dark below DARK_LUMINANCE;
 * - textPrimary / textSecondary: the most common text colours by characters (textSecondary not the link colour);
 * - link: the most common link colour;
 * - primary, secondary, accent: the first distinct non-grey colours among, in order, button backgrounds (by count),
 *   the link colour, backgrounds (by painted area) and text colours (by characters);
 * - components: the most common button background that is not grey (else the first button) is buttonPrimary, the
 *   first button with another background buttonSecondary;
 * - logo: the sampler's logo, else og:image, else the favicon.
 */
export function brandingProfile(s: BrandingSample): Branding {
  const background = solidHex(s.body.background) ?? solidHex(s.html.background) ?? "#FFFFFF";
  const colorScheme = luminance(parseColor(background) as Rgba) < DARK_LUMINANCE ? "dark" : "light";
  const link = rank(s.links.map((c) => ({ key: solidHex(c), weight: 1 })))[0];
  const texts = rank(s.text.map((t) => ({ key: solidHex(t.color), weight: t.chars })));
  const textPrimary = texts[0] ?? solidHex(s.body.color);
  const textSecondary = texts.find((c) => c !== textPrimary && c !== link);

  const buttonBgs = rank(s.buttons.map((b) => ({ key: solidHex(b.background), weight: 1 })));
  const primaryBg = buttonBgs.find(chromatic);
  const primaryButton = primaryBg ? s.buttons.find((b) => solidHex(b.background) === primaryBg) : s.buttons[0];
  const secondaryButton = primaryButton && s.buttons.find((b) => solidHex(b.background) !== solidHex(primaryButton.background));

  const evidence = [
    ...buttonBgs,
    ...(link ? [link] : []),
    ...rank(s.backgrounds.map((b) => ({ key: solidHex(b.color), weight: b.area }))),
    ...texts,
  ];
  const brand = [...new Set(evidence.filter(chromatic))];

  const fonts = rank(s.text.map((t) => ({ key: namedFamily(t.fontFamily), weight: t.chars })))
    .filter((f) => !GENERIC.has(f.toLowerCase()))
    .slice(0, 10)
    .map((family) => ({ family }));
  const heading = s.headings.h1 ?? s.headings.h2 ?? s.headings.h3;
  const bodyStack = fontStack(s.body.fontFamily);
  const borderRadius = primaryButton && primaryButton.borderRadius && Number.parseFloat(primaryButton.borderRadius) > 0 ? primaryButton.borderRadius : undefined;

  const ogImage = s.meta.ogImage;
  const favicon = s.meta.favicon;
  const logo = s.logo?.src ?? ogImage ?? favicon;
  const brandName = s.meta.siteName?.trim() || s.meta.applicationName?.trim() || s.logo?.alt?.trim() || undefined;

  const profile: Branding = {
    colorScheme,
    ...(brandName ? { brandName } : {}),
    ...(logo ? { logo } : {}),
    fonts,
    colors: compact({ primary: brand[0], secondary: brand[1], accent: brand[2], background, textPrimary, textSecondary, link }) ?? { background },
    typography: {
      ...optional("fontFamilies", compact({ primary: bodyStack[0], heading: heading && fontStack(heading.fontFamily)[0], code: s.code && fontStack(s.code.fontFamily)[0] })),
      ...optional("fontStacks", compact({
        primary: bodyStack.length ? bodyStack : undefined,
        heading: heading ? fontStack(heading.fontFamily) : undefined,
        body: bodyStack.length ? bodyStack : undefined,
        paragraph: s.paragraph ? fontStack(s.paragraph.fontFamily) : undefined,
      })),
      ...optional("fontSizes", compact({ h1: s.headings.h1?.fontSize, h2: s.headings.h2?.fontSize, h3: s.headings.h3?.fontSize, body: s.body.fontSize || undefined, small: s.small?.fontSize })),
      ...optional("lineHeights", compact({ heading: lineHeightRatio(heading), body: lineHeightRatio(s.body) })),
    },
    ...optional("spacing", borderRadius ? { borderRadius } : undefined),
    ...optional("components", compact({ buttonPrimary: buttonStyle(primaryButton), buttonSecondary: buttonStyle(secondaryButton) })),
    ...optional("images", compact({ logo: s.logo?.src, favicon, ogImage })),
  };
  return profile;
}

const optional = <K extends string, V>(key: K, value: V | undefined): { [k in K]?: V } => (value === undefined ? {} : ({ [key]: value } as { [k in K]: V }));
