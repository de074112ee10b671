// A webhook URL must be one the deliverer can parse: the schema's `uri` format admits some the WHATWG URL parser
// refuses (`http://a:b`, `http://:80`, `https://`), which were accepted and then failed every delivery as a bug.
import type { CrawlRequest } from "../schemas/index.ts";
import { badRequest } from "./errors.ts";

export function checkWebhookUrl(webhook: CrawlRequest["webhook"]): void {
  if (webhook === undefined) return;
  const [url, path] = typeof webhook === "string" ? [webhook, ["webhook"]] : [webhook.url, ["webhook", "url"]];
  if (!isHttpUrl(url)) {
    const message = `Invalid webhook URL: ${JSON.stringify(url)}`;
    throw badRequest([{ code: "custom", path, message }], message);
  }
}

function isHttpUrl(url: string): boolean {
  if (!URL.canParse(url)) return false;
  const u = new URL(url);
  return (u.protocol === "http:" || u.protocol === "https:") && u.hostname !== "";
}
