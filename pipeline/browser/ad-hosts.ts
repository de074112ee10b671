// blockAds: the ad and tracker host names of Adblock-syntax filter lists (EasyList and EasyPrivacy as Debian's
// webext-ublock-origin-chromium package installs them; read from disk, never fetched at run time). Only whole-host
// rules are used (`||host^`, with resource-type or third-party options at most); rules restricted to some sites,
// popups, redirects or paths are left out, and whole-host exceptions (`@@||host^`, for the host and its subdomains)
// win unless the block is `$important`. A host is blocked when it or one of its parent domains is on the list.
import { readFileSync } from "node:fs";

const RULE = /^(@@)?\|\|([a-z0-9.-]+)\^(?:\$(.*))?$/;
/** options that only narrow which requests to a host are blocked: blocking the whole host is the approximation */
const HOST_WIDE = new Set(["third-party", "3p", "script", "image", "stylesheet", "css", "xmlhttprequest", "xhr", "subdocument", "frame", "media", "font", "object", "ping", "beacon", "websocket", "other", "all", "important"]);

export interface AdHosts {
  /** host names blocked (with their subdomains) */
  readonly size: number;
  blocks(host: string): boolean;
}

/** The whole-host rules of filter list texts. */
export function parseAdHosts(texts: string[]): AdHosts {
  const blocked = new Set<string>();
  const important = new Set<string>();
  const allowed = new Set<string>();
  for (const text of texts) {
    for (const line of text.split("\n")) {
      const m = RULE.exec(line.trim().toLowerCase());
      if (!m) continue;
      const options = m[3] ? m[3].split(",") : [];
      if (!options.every((o) => HOST_WIDE.has(o))) continue;
      const host = m[2] as string;
      if (m[1]) allowed.add(host);
      else (options.includes("important") ? important : blocked).add(host);
    }
  }
  /** whether the host or one of its parent domains is in `set` */
  const listed = (set: Set<string>, host: string): boolean => {
    for (let h = host; ; h = h.slice(h.indexOf(".") + 1)) {
      if (set.has(h)) return true;
      if (!h.includes(".")) return false;
    }
  };
  return {
    size: blocked.size + important.size,
    blocks(host: string): boolean {
      const h = host.toLowerCase().replace(/\.$/, "");
      // as the filter syntax has it: $important blocks beat exceptions, exceptions (of the host or a parent) beat blocks
      if (listed(important, h)) return true;
      return !listed(allowed, h) && listed(blocked, h);
    },
  };
}

/** The lists at these paths; a missing file is reported in `missing` (blockAds then blocks only what the others list). */
export function loadAdHosts(paths: string[]): { hosts: AdHosts; missing: string[] } {
  const texts: string[] = [];
  const missing: string[] = [];
  for (const path of paths) {
    try {
      texts.push(readFileSync(path, "utf8"));
    } catch {
      missing.push(path);
    }
  }
  return { hosts: parseAdHosts(texts), missing };
}
