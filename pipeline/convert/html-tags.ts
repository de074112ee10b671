// The names the fast parser knows (parse-html.ts): the HTML parsing rules' tag sets, and tables that find a tag or
// attribute name written in the source, in any ASCII case, without slicing a string.
export const VOID = new Set(["area", "base", "br", "col", "embed", "hr", "img", "input", "keygen", "link", "meta", "param", "source", "track", "wbr", "basefont", "bgsound", "frame"]);
/** content is text up to the matching end tag, entities not decoded */
export const RAW_TEXT = new Set(["script", "style", "xmp", "iframe", "noembed", "noframes", "noscript"]);
/** content is text up to the matching end tag, entities decoded */
export const RCDATA = new Set(["title", "textarea"]);
export const CLOSES_P = new Set([
  "address", "article", "aside", "blockquote", "center", "details", "dialog", "dir", "div", "dl", "dd", "dt", "fieldset", "figcaption",
  "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hgroup", "hr", "li", "main", "menu", "nav", "ol", "p",
  "pre", "listing", "section", "summary", "table", "ul", "plaintext", "xmp",
]);
export const HEADINGS = new Set(["h1", "h2", "h3", "h4", "h5", "h6"]);
export const HEAD_CONTENT = new Set(["meta", "link", "title", "style", "script", "base", "noscript", "template", "basefont", "bgsound"]);
/** an end tag or an implied close never reaches past these */
export const SCOPE = new Set(["html", "table", "td", "th", "caption", "template", "button", "marquee", "object", "applet"]);
export const TABLE_SECTIONS = new Set(["thead", "tbody", "tfoot"]);
export const TABLE_PARTS = new Set(["table", "thead", "tbody", "tfoot", "tr"]);
export const TABLE_SCOPE = new Set(["html", "table", "template"]);
export const FORMATTING = new Set(["b", "big", "code", "em", "font", "i", "s", "small", "strike", "strong", "tt", "u"]);


/**
 * Elements the metadata / link pass reads, listed while parsing (in document order) so it needs no tree walk; so
 * are the landmarks main-content scoring looks for (these tags, and any element with a `role`).
 */
export const INDEXED_TAGS = new Set(["html", "title", "base", "meta", "link", "a", "body", "main", "article"]);

/**
 * Known names, found from the source without slicing a string: the same string object every time, so no copy per
 * tag and the hash each Set / Map lookup needs is computed once per name for the life of the process.
 */
class NameTable<T extends { readonly name: string }> {
  private readonly slots: (T | undefined)[];
  private readonly mask: number;
  private readonly byName = new Map<string, T>();

  constructor(entries: Iterable<T>) {
    for (const e of entries) this.byName.set(e.name, e);
    let size = 64;
    while (size < this.byName.size * 4) size *= 2;
    this.slots = new Array<T | undefined>(size);
    this.mask = size - 1;
    for (const e of this.byName.values()) {
      let k = NameTable.hash(e.name, 0, e.name.length) & this.mask;
      while (this.slots[k] !== undefined) k = (k + 1) & this.mask;
      this.slots[k] = e;
    }
  }

  /** The entry of a lower-case name. */
  get(name: string): T | undefined {
    return this.byName.get(name);
  }

  private static hash(s: string, from: number, to: number): number {
    let h = 0;
    for (let i = from; i < to; i++) h = (Math.imul(h, 31) + (s.charCodeAt(i) | 32)) | 0;
    return h;
  }

  /** The entry of the name written at `src[from, to)` in any ASCII case, or undefined. */
  find(src: string, from: number, to: number): T | undefined {
    const len = to - from;
    for (let k = NameTable.hash(src, from, to) & this.mask; ; k = (k + 1) & this.mask) {
      const entry = this.slots[k];
      if (entry === undefined) return undefined;
      const name = entry.name;
      if (name.length !== len) continue;
      let i = 0;
      while (i < len) {
        const c = src.charCodeAt(from + i);
        if (c !== name.charCodeAt(i) && !(c >= 65 && c <= 90 && c + 32 === name.charCodeAt(i))) break;
        i++;
      }
      if (i === len) return entry;
    }
  }
}

/** What the tree builder needs to know of a tag name (one lookup per tag). */
export interface Tag {
  readonly name: string;
  readonly isVoid: boolean;
  /** raw text or RCDATA content */
  readonly raw: boolean;
  readonly rcdata: boolean;
  readonly closesP: boolean;
  readonly heading: boolean;
  readonly headContent: boolean;
  readonly indexed: boolean;
  readonly tablePart: boolean;
}

function tagEntry(name: string): Tag {
  return {
    name, isVoid: VOID.has(name), raw: RAW_TEXT.has(name) || RCDATA.has(name), rcdata: RCDATA.has(name), closesP: CLOSES_P.has(name),
    heading: HEADINGS.has(name), headContent: HEAD_CONTENT.has(name), indexed: INDEXED_TAGS.has(name), tablePart: TABLE_PARTS.has(name),
  };
}

export const TAGS = new NameTable([
  ...VOID, ...RAW_TEXT, ...RCDATA, ...CLOSES_P, ...HEAD_CONTENT, ...SCOPE, ...TABLE_PARTS, ...FORMATTING, ...INDEXED_TAGS,
  "a", "abbr", "audio", "b", "bdi", "bdo", "body", "canvas", "caption", "cite", "code", "col", "colgroup", "data", "del", "dfn", "em",
  "figure", "g", "head", "html", "i", "ins", "kbd", "label", "legend", "map", "mark", "math", "nobr", "optgroup", "option", "output",
  "path", "picture", "progress", "q", "rp", "rt", "ruby", "samp", "select", "slot", "span", "sub", "sup", "svg", "td", "th", "time",
  "var", "video",
].map(tagEntry));

/** The tag of a lower-case name (every name of the rules' sets is in the table: others have none of the rules). */
export const tagOf = (name: string): Tag =>
  TAGS.get(name) ?? { name, isVoid: false, raw: false, rcdata: false, closesP: false, heading: false, headContent: false, indexed: false, tablePart: false };

export const ATTR_NAMES = new NameTable<{ name: string }>([
  "class", "id", "href", "src", "title", "alt", "role", "rel", "name", "content", "property", "itemprop", "http-equiv", "type", "lang",
  "style", "width", "height", "target", "srcset", "sizes", "loading", "charset", "value", "for", "colspan", "rowspan", "align", "valign",
  "border", "cellpadding", "cellspacing", "summary", "start", "dir", "tabindex", "hidden", "xmlns", "viewbox", "d", "fill", "stroke",
  "aria-label", "aria-hidden", "aria-labelledby", "aria-expanded", "aria-controls", "accesskey", "action", "method", "placeholder",
  "checked", "disabled", "data-toggle", "data-target", "media", "async", "defer", "crossorigin", "integrity", "datetime", "itemscope",
  "itemtype", "scope", "headers", "translate", "onclick",
].map((name) => ({ name })));
