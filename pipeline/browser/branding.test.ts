import { Ajv } from "ajv";
import { describe, expect, it } from "vitest";
import { schemas } from "../../schemas/index.ts";
import { brandingProfile, chromatic, DARK_LUMINANCE, fontStack, luminance, parseColor, rank, solidHex, toHex, type BrandingSample } from "./branding.ts";

const sample = (over: Partial<BrandingSample> = {}): BrandingSample => ({
  html: { background: "rgba(0, 0, 0, 0)" },
  body: { background: "rgb(255, 255, 255)", color: "rgb(17, 24, 39)", fontFamily: "Inter, Arial, sans-serif", fontSize: "16px", lineHeight: "24px" },
  headings: {},
  text: [],
  backgrounds: [],
  links: [],
  buttons: [],
  meta: {},
  ...over,
});

describe("colours", () => {
  it("reads computed colours in their forms, upper-case hex out", () => {
    expect(parseColor("rgb(255, 90, 31)")).toEqual({ r: 255, g: 90, b: 31, a: 1 });
    expect(parseColor("rgba(0, 0, 0, 0)")).toEqual({ r: 0, g: 0, b: 0, a: 0 });
    expect(parseColor("rgb(10 20 30 / 50%)")).toEqual({ r: 10, g: 20, b: 30, a: 0.5 });
    expect(parseColor("#0af")).toEqual({ r: 0, g: 170, b: 255, a: 1 });
    expect(parseColor("transparent")?.a).toBe(0);
    expect(parseColor("oklch(0.7 0.1 200)")).toBeNull();
    expect(toHex({ r: 255, g: 90, b: 31, a: 1 })).toBe("#FF5A1F");
    expect(solidHex("rgba(255, 0, 0, 0.4)")).toBeUndefined();
    expect(solidHex("rgba(255, 0, 0, 0.6)")).toBe("#FF0000");
  });

  it("luminance is WCAG's; greys are not brand colours", () => {
    expect(luminance({ r: 0, g: 0, b: 0, a: 1 })).toBe(0);
    expect(luminance({ r: 255, g: 255, b: 255, a: 1 })).toBe(1);
    expect(luminance({ r: 18, g: 18, b: 18, a: 1 })).toBeLessThan(DARK_LUMINANCE);
    expect(luminance({ r: 128, g: 128, b: 128, a: 1 })).toBeCloseTo(0.2159, 3);
    expect(chromatic("#FF5A1F")).toBe(true);
    expect(chromatic("#6B7280")).toBe(false);
    expect(chromatic("#FFFFFF")).toBe(false);
  });

  it("ranks by weight, ties in order of first appearance", () => {
    expect(rank([{ key: "a", weight: 1 }, { key: "b", weight: 2 }, { key: "c", weight: 2 }, { key: "a", weight: 2 }, { key: undefined, weight: 9 }])).toEqual(["a", "b", "c"]);
    expect(rank([{ key: "x", weight: 1 }, { key: "y", weight: 1 }])).toEqual(["x", "y"]);
  });

  it("splits font stacks and unquotes them", () => {
    expect(fontStack(`"Playfair Display", Georgia, serif`)).toEqual(["Playfair Display", "Georgia", "serif"]);
    expect(fontStack("'A B',C")).toEqual(["A B", "C"]);
  });
});

describe("brandingProfile", () => {
  it("a page with buttons, links and a logo", () => {
    const profile = brandingProfile(sample({
      headings: { h1: { fontFamily: `"Playfair Display", serif`, fontSize: "48px", lineHeight: "57.6px" }, h2: { fontFamily: `"Playfair Display", serif`, fontSize: "32px", lineHeight: "normal" } },
      paragraph: { fontFamily: "Inter, Arial, sans-serif" },
      code: { fontFamily: `"JetBrains Mono", monospace` },
      text: [
        { color: "rgb(17, 24, 39)", fontFamily: "Inter, Arial, sans-serif", chars: 400 },
        { color: "rgb(17, 24, 39)", fontFamily: `"Playfair Display", serif`, chars: 30 },
        { color: "rgb(37, 99, 235)", fontFamily: "Inter, Arial, sans-serif", chars: 120 },
        { color: "rgb(107, 114, 128)", fontFamily: "Inter, Arial, sans-serif", chars: 80 },
      ],
      backgrounds: [{ color: "rgb(255, 255, 255)", area: 2_000_000 }, { color: "rgb(16, 185, 129)", area: 50_000 }, { color: "rgba(0, 0, 0, 0)", area: 9_000_000 }],
      links: ["rgb(37, 99, 235)", "rgb(37, 99, 235)", "rgb(17, 24, 39)"],
      buttons: [
        { background: "rgb(255, 255, 255)", color: "rgb(17, 24, 39)", borderColor: "rgb(17, 24, 39)", borderWidth: "1px", borderRadius: "8px" },
        { background: "rgb(255, 90, 31)", color: "rgb(255, 255, 255)", borderColor: "rgb(255, 90, 31)", borderWidth: "0px", borderRadius: "8px" },
        { background: "rgb(255, 90, 31)", color: "rgb(255, 255, 255)", borderColor: "rgb(255, 90, 31)", borderWidth: "0px", borderRadius: "8px" },
      ],
      logo: { src: "http://site.test/logo.png", alt: "Acme" },
      meta: { ogImage: "http://site.test/og.png", favicon: "http://site.test/favicon.ico" },
    }));
    expect(profile).toEqual({
      colorScheme: "light",
      brandName: "Acme",
      logo: "http://site.test/logo.png",
      fonts: [{ family: "Inter" }, { family: "Playfair Display" }],
      colors: { primary: "#FF5A1F", secondary: "#2563EB", accent: "#10B981", background: "#FFFFFF", textPrimary: "#111827", textSecondary: "#6B7280", link: "#2563EB" },
      typography: {
        fontFamilies: { primary: "Inter", heading: "Playfair Display", code: "JetBrains Mono" },
        fontStacks: { primary: ["Inter", "Arial", "sans-serif"], heading: ["Playfair Display", "serif"], body: ["Inter", "Arial", "sans-serif"], paragraph: ["Inter", "Arial", "sans-serif"] },
        fontSizes: { h1: "48px", h2: "32px", body: "16px" },
        lineHeights: { heading: 1.2, body: 1.5 },
      },
      spacing: { borderRadius: "8px" },
      components: {
        buttonPrimary: { background: "#FF5A1F", textColor: "#FFFFFF", borderRadius: "8px" },
        buttonSecondary: { background: "#FFFFFF", textColor: "#111827", borderColor: "#111827", borderRadius: "8px" },
      },
      images: { logo: "http://site.test/logo.png", favicon: "http://site.test/favicon.ico", ogImage: "http://site.test/og.png" },
    });
    // the profile is what the OpenAPI document declares (schemas/branding.schema.json)
    const valid = new Ajv({ strict: true, allowUnionTypes: true }).compile(schemas.branding as object);
    expect(valid(profile), JSON.stringify(valid.errors)).toBe(true);
  });

  it("a dark page: the root's background when the body has none; no buttons, og:image then favicon for the logo", () => {
    const dark = brandingProfile(sample({ body: { ...sample().body, background: "rgba(0, 0, 0, 0)", color: "rgb(230, 230, 230)" }, html: { background: "rgb(18, 18, 18)" }, meta: { ogImage: "http://s.test/og.png", siteName: " Nightly " } }));
    expect(dark).toMatchObject({ colorScheme: "dark", brandName: "Nightly", logo: "http://s.test/og.png", colors: { background: "#121212", textPrimary: "#E6E6E6" } });
    expect(dark.colors.primary).toBeUndefined();
    expect(dark.components).toBeUndefined();
    expect(brandingProfile(sample({ meta: { favicon: "http://s.test/f.ico" } })).logo).toBe("http://s.test/f.ico");
    // nothing painted: white, light
    expect(brandingProfile(sample({ body: { ...sample().body, background: "rgba(0, 0, 0, 0)" } }))).toMatchObject({ colorScheme: "light", colors: { background: "#FFFFFF" } });
  });

  it("is the same for the same sample (deterministic)", () => {
    const s = sample({ text: [{ color: "rgb(1, 2, 3)", fontFamily: "A", chars: 5 }, { color: "rgb(200, 10, 10)", fontFamily: "B", chars: 5 }] });
    expect(brandingProfile(s)).toEqual(brandingProfile(structuredClone(s)));
    expect(brandingProfile(s).colors).toMatchObject({ textPrimary: "#010203", textSecondary: "#C80A0A", primary: "#C80A0A" });
  });
});
