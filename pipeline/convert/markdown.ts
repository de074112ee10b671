// HTML -> markdown with turndown (fenced code, ATX headings, GFM-style tables kept simple).
import TurndownService from "turndown";

export function createMarkdownConverter(): (html: string) => string {
  const td = new TurndownService({ headingStyle: "atx", codeBlockStyle: "fenced", bulletListMarker: "-", emDelimiter: "_" });
  td.remove(["script", "style", "noscript"]);
  return (html) => td.turndown(html);
}
