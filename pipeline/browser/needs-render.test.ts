import { describe, expect, it } from "vitest";
import { browserOption, MIN_STATIC_TEXT, scriptBuilt, visibleTextLength } from "./needs-render.ts";

const words = (n: number) => "word ".repeat(Math.ceil(n / 4));
const page = (body: string, head = "") => `<!doctype html><html><head><title>t</title>${head}</head><body>${body}</body></html>`;

describe("scriptBuilt (RENDER=auto)", () => {
  it.each([
    ["empty React root", page(`<div id="root"></div><script src="/main.js"></script>`), "empty app root"],
    ["empty Vue root with spaces", page(`<div class="x" id='app'>\n </div><script src="/app.js"></script>`), "empty app root"],
    ["empty Next root", page(`<div id="__next"></div><script>1</script>`), "empty app root"],
    ["empty Angular root", page(`<app-root></app-root><script src="/main.js"></script>`), "empty app root"],
    ["noscript notice (with some text)", page(`<noscript>You need to enable JavaScript to run this app.</noscript><nav>${words(300)}</nav><script src="/a.js"></script>`), "noscript notice"],
    ["little text and a script", page(`<h1>Loading…</h1><script src="/bundle.js"></script>`), "little text while scripts are present"],
  ])("%s -> render", (_name, html, why) => {
    expect(scriptBuilt(html)).toBe(why);
  });

  it.each([
    ["a documentation page with analytics", page(`<h1>Docs</h1><p>${words(2000)}</p><script>ga()</script>`, `<script src="/analytics.js"></script>`)],
    ["a short page without scripts", page(`<p>Hello</p>`)],
    ["a filled root", page(`<div id="root"><p>${words(400)}</p></div><script src="/hydrate.js"></script>`)],
    ["a noscript tracking pixel", page(`<p>${words(400)}</p><noscript><img src="/pixel.gif"></noscript><script>track()</script>`)],
    ["text only in scripts does not count as text, but a long article does", page(`<article>${words(MIN_STATIC_TEXT + 10)}</article><script>var s = "${words(5000)}";</script>`)],
  ])("%s -> static", (_name, html) => {
    expect(scriptBuilt(html)).toBeNull();
  });

  it("counts visible text only: not scripts, styles, comments or tags", () => {
    expect(visibleTextLength(`<p>ab c</p><script>var x = "long text";</script><style>p{}</style><!-- note --><b>d</b>`)).toBe(4);
  });
});

describe("browserOption", () => {
  it("names the option that needs a browser", () => {
    expect(browserOption({})).toBeNull();
    expect(browserOption({ waitForMs: 0, actions: [] })).toBeNull();
    expect(browserOption({ waitForMs: 500 })).toBe("waitFor");
    expect(browserOption({ actions: [{ type: "scrape" }] })).toBe("actions");
    expect(browserOption({ screenshot: { fullPage: true } })).toBe("screenshot");
    expect(browserOption({ mobile: true })).toBe("mobile");
    expect(browserOption({ formats: ["markdown", "branding"] })).toBe("branding");
    expect(browserOption({ formats: ["markdown", "html"] })).toBeNull();
  });
});
