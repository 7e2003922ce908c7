/**
 * What the visible text of an HTML page is, given its tokens: the element rules of htmlparser2's
 * Parser (version 12) and an element stack kept by them, and where each piece of text goes (the
 * page's text, its <title>, or nowhere inside script, style, noscript, template, svg, iframe and
 * object). Block-level elements separate words (inline ones such as <b> or <span> do not).
 *
 * The tokens come from html-scan.ts (the pages the WebAssembly extraction leaves to JS) or from
 * htmlparser2's Tokenizer (html-tokenizer.ts, the reference the scan is tested against); both call
 * the methods named as the Tokenizer's callbacks. The rules here are the one home of the element
 * rules: html-tokens-wasm.ts gives them to the WebAssembly element stack, a port of this class
 * (indexer/scan/wasm/html-stack.ts). Why the stack: an end tag closes the elements opened inside it; some
 * start tags close open ones, e.g. <p> an open <p>; void elements close at once; SVG and MathML
 * content is foreign, so the page's text depends on it.
 */
import { grown } from '../../runtime/grown.js';

const HIDDEN = new Set(['script', 'style', 'noscript', 'template', 'svg', 'iframe', 'object']);
const BLOCK = new Set([
  'address', 'article', 'aside', 'blockquote', 'body', 'br', 'caption', 'dd', 'details', 'dialog', 'div', 'dl', 'dt', 'fieldset',
  'figcaption', 'figure', 'footer', 'form', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'header', 'hr', 'html', 'img', 'input', 'label', 'legend', 'li',
  'main', 'menu', 'nav', 'ol', 'option', 'p', 'pre', 'section', 'select', 'summary', 'table', 'tbody', 'td', 'textarea', 'tfoot', 'th',
  'thead', 'title', 'tr', 'ul',
]);

// The HTML rules of htmlparser2's Parser (lib/Parser.ts, version 12) for its element stack.
const FORM_TAGS = new Set(['input', 'option', 'optgroup', 'select', 'button', 'datalist', 'textarea']);
const P_TAG = new Set(['p']);
const HEADING_TAGS = new Set(['h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'p']);
const TABLE_SECTION_TAGS = new Set(['thead', 'tbody']);
const DDT_TAGS = new Set(['dd', 'dt']);
const RTP_TAGS = new Set(['rt', 'rp']);
/** A start tag closes the open elements on top of the stack that are in its set. */
const OPEN_IMPLIES_CLOSE = new Map<string, Set<string>>([
  ['tr', new Set(['tr', 'th', 'td'])], ['th', new Set(['th'])], ['td', new Set(['thead', 'th', 'td'])], ['body', new Set(['head', 'link', 'script'])],
  ['a', new Set(['a'])], ['li', new Set(['li'])], ['p', P_TAG], ['h1', HEADING_TAGS], ['h2', HEADING_TAGS], ['h3', HEADING_TAGS],
  ['h4', HEADING_TAGS], ['h5', HEADING_TAGS], ['h6', HEADING_TAGS], ['select', FORM_TAGS], ['input', FORM_TAGS], ['output', FORM_TAGS],
  ['button', FORM_TAGS], ['datalist', FORM_TAGS], ['textarea', FORM_TAGS], ['option', new Set(['option'])], ['optgroup', new Set(['optgroup', 'option'])],
  ['dd', DDT_TAGS], ['dt', DDT_TAGS], ['address', P_TAG], ['article', P_TAG], ['aside', P_TAG], ['blockquote', P_TAG], ['details', P_TAG],
  ['div', P_TAG], ['dl', P_TAG], ['fieldset', P_TAG], ['figcaption', P_TAG], ['figure', P_TAG], ['footer', P_TAG], ['form', P_TAG],
  ['header', P_TAG], ['hr', P_TAG], ['main', P_TAG], ['nav', P_TAG], ['ol', P_TAG], ['pre', P_TAG], ['section', P_TAG], ['table', P_TAG],
  ['ul', P_TAG], ['rt', RTP_TAGS], ['rp', RTP_TAGS], ['tbody', TABLE_SECTION_TAGS], ['tfoot', TABLE_SECTION_TAGS],
]);
const VOID_ELEMENTS = new Set(['area', 'base', 'basefont', 'br', 'col', 'command', 'embed', 'frame', 'hr', 'img', 'input', 'isindex', 'keygen', 'link', 'meta', 'param', 'source', 'track', 'wbr']);
/** HTML integration points: HTML content inside SVG or MathML (SVG-adjusted names). */
const HTML_INTEGRATION = new Set(['mi', 'mo', 'mn', 'ms', 'mtext', 'annotation-xml', 'foreignObject', 'desc', 'title']);
const SVG_NAMES = new Map(
  [
    'altGlyph', 'altGlyphDef', 'altGlyphItem', 'animateColor', 'animateMotion', 'animateTransform', 'clipPath', 'feBlend', 'feColorMatrix',
    'feComponentTransfer', 'feComposite', 'feConvolveMatrix', 'feDiffuseLighting', 'feDisplacementMap', 'feDistantLight', 'feDropShadow',
    'feFlood', 'feFuncA', 'feFuncB', 'feFuncG', 'feFuncR', 'feGaussianBlur', 'feImage', 'feMerge', 'feMergeNode', 'feMorphology', 'feOffset',
    'fePointLight', 'feSpecularLighting', 'feSpotLight', 'feTile', 'feTurbulence', 'foreignObject', 'glyphRef', 'linearGradient',
    'radialGradient', 'textPath',
  ].map((n) => [n.toLowerCase(), n]),
);
const NONE = 0;
const SVG = 1;
const MATHML = 2;

/**
 * Every lowercased tag name the rules above speak of: what the WebAssembly element stack is told
 * of (html-tokens-wasm.ts), with tagRules and svgSpelling.
 */
export const RULE_NAMES: readonly string[] = [
  ...new Set([
    ...HIDDEN, ...BLOCK, ...OPEN_IMPLIES_CLOSE.keys(), ...[...OPEN_IMPLIES_CLOSE.values()].flatMap((set) => [...set]), ...VOID_ELEMENTS,
    ...[...HTML_INTEGRATION].filter((name) => name === name.toLowerCase()), ...SVG_NAMES.keys(), 'svg', 'math', 'image', 'form', 'title',
  ]),
];

/** A name's spelling in SVG content (e.g. clipPath for clippath), if it has one. */
export function svgSpelling(name: string): string | undefined {
  return SVG_NAMES.get(name);
}

/** What the rules above say of one tag name, looked up once a name (a tag costs no Set lookups). */
export interface Tag {
  readonly name: string;
  readonly hidden: boolean;
  readonly block: boolean;
  readonly isVoid: boolean;
  /** The open elements its start tag closes (OPEN_IMPLIES_CLOSE). */
  readonly closes: Set<string> | undefined;
  /** The foreign context its element opens (SVG, MATHML, NONE for an integration point), or -1. */
  readonly context: number;
}

const tags = new Map<string, Tag>();

export function tagRules(name: string): Tag {
  let tag = tags.get(name);
  if (tag === undefined) {
    const context = name === 'svg' ? SVG : name === 'math' ? MATHML : HTML_INTEGRATION.has(name) ? NONE : -1;
    tag = { name, hidden: HIDDEN.has(name), block: BLOCK.has(name), isVoid: VOID_ELEMENTS.has(name), closes: OPEN_IMPLIES_CLOSE.get(name), context };
    // Bounded (a page of random tag names): entries are only a cache, compared by name.
    if (tags.size >= 4096) tags.clear();
    tags.set(name, tag);
  }
  return tag;
}

/**
 * Recent tag names by a hash of their lowercased ASCII characters: a tag's name is found from the
 * page's characters without a slice, a lowercasing (which on a page decoded to two-byte
 * characters goes through ICU) or a string hash.
 */
const RECENT_BITS = 10;
const recent: (Tag | undefined)[] = new Array<Tag | undefined>(1 << RECENT_BITS).fill(undefined);

export interface HtmlText {
  title: string;
  text: string;
}

/** A title's white space collapsed and trimmed. */
export const tidyTitle = (s: string): string => s.replace(/\s+/g, ' ').trim();

/**
 * The Tokenizer's callbacks: the Parser's element stack (top at the end here), and the text
 * events it would give the extraction (open, close, text) handled at once.
 */
export class Extraction {
  html = '';
  parts: string[] = [];
  title: string[] | undefined;
  titleDone = false;
  hidden = 0;
  inTitle = false;
  /** Open elements, innermost last. */
  readonly stack: Tag[] = [];
  /** Foreign-content contexts, innermost last; the first is the document's (NONE). */
  readonly foreign: number[] = [NONE];
  /** The start tag being read (undefined for none, or a second <form>, which the Parser ignores). */
  tag: Tag | undefined;
  opening = false;

  /**
   * The page's bytes where it is UTF-8 read as one-byte characters (htmlUtf8ToText, where the
   * WebAssembly extraction does not read it): `html` is them as latin1, entities go in as their
   * UTF-8 bytes, the text is copied as bytes into `out` (no string a piece), and take() decodes
   * title and text.
   */
  page: Uint8Array | undefined;
  /** The text's bytes so far, on a UTF-8 page: out[0, outLength). */
  private outLength = 0;

  /** Starts a page: its characters `html`, and its UTF-8 bytes `page` where it is read as bytes. */
  reset(html: string, page?: Uint8Array): void {
    this.html = html;
    this.page = page;
    this.outLength = 0;
    this.parts = [];
    this.title = undefined;
    this.titleDone = false;
    this.hidden = 0;
    this.inTitle = false;
    this.stack.length = 0;
    this.foreign.length = 1;
    this.tag = undefined;
    this.opening = false;
  }

  /** The page's title and text, once `onend` has run, where it was read decoded; forgets the page. */
  take(): HtmlText {
    const { title, parts } = this;
    this.reset('');
    return { title: title ? tidyTitle(title.join('')) : '', text: parts.join('') };
  }

  /**
   * take() of a page read as UTF-8 bytes (`page` given to reset), its text left as those bytes:
   * a view valid until the next page is extracted.
   */
  takeUtf8(): { title: string; text: Uint8Array } {
    const title = this.title;
    const text = out.subarray(0, this.outLength);
    // A rare huge page's buffer is not kept for the pages after it (the view keeps it meanwhile).
    if (out.length > OUT_KEPT_BYTES) out = new Uint8Array(OUT_FIRST_BYTES);
    this.reset('');
    // The title is decoded before its white space is collapsed: \s takes Unicode spaces too.
    return { title: title ? tidyTitle(Buffer.from(title.join(''), 'latin1').toString('utf8')) : '', text };
  }

  // What the extraction does with the Parser's events.
  private opened(tag: Tag): void {
    if (tag.name === 'title' && this.hidden === 0 && !this.titleDone) {
      // the page's first <title> (not an <svg>'s)
      this.inTitle = true;
      this.title = [];
    } else if (tag.hidden) this.hidden++;
    if (tag.block) this.separate();
  }

  private closed(tag: Tag): void {
    if (tag.name === 'title' && this.inTitle) {
      this.inTitle = false;
      this.titleDone = true;
    } else if (tag.hidden && this.hidden > 0) this.hidden--;
    if (tag.block) this.separate();
  }

  /** A block element's edge: a space in the text (hidden or not, as the Parser-driven extraction did). */
  private separate(): void {
    if (this.page !== undefined) {
      if (this.outLength === out.length) out = grown(out, this.outLength + 1, this.outLength);
      out[this.outLength++] = 0x20;
    } else this.parts.push(' ');
  }

  /** An entity's text (decoded characters): as UTF-8 bytes on a UTF-8 page read as bytes. */
  entity(s: string): void {
    this.text(this.page !== undefined ? utf8AsLatin1(s) : s);
  }

  /** Text of the page (or of its title), where it goes. */
  text(s: string): void {
    if (this.inTitle) this.title!.push(s);
    else if (this.hidden === 0) {
      if (this.page === undefined) return void this.parts.push(s);
      // One-byte characters: each is a byte of the page's UTF-8, or of an entity's (entity()).
      const at = this.outLength;
      if (at + s.length > out.length) out = grown(out, at + s.length, at);
      for (let i = 0; i < s.length; i++) out[at + i] = s.charCodeAt(i);
      this.outLength = at + s.length;
    }
  }

  // The Parser's element stack.
  isInForeignContext(): boolean {
    return this.foreign[this.foreign.length - 1] !== NONE;
  }

  /** The tag named by the page's characters [start, end), lowercased (the Parser's readTagName). */
  private tagAt(start: number, end: number): Tag {
    const html = this.html;
    let h = end - start;
    let ascii = true;
    for (let i = start; i < end; i++) {
      let c = html.charCodeAt(i);
      if (c >= 0x80) {
        ascii = false;
        break;
      }
      if (c >= 0x41 && c <= 0x5a) c |= 0x20;
      h = Math.imul(h ^ c, 0x01000193);
    }
    let tag: Tag | undefined;
    if (ascii) {
      const slot = (h ^ (h >>> 15)) & ((1 << RECENT_BITS) - 1);
      tag = recent[slot];
      if (tag === undefined || !sameName(tag.name, html, start, end)) recent[slot] = tag = tagRules(html.slice(start, end).toLowerCase());
    } else if (this.page !== undefined) throw READ_DECODED;
    else tag = tagRules(html.slice(start, end).toLowerCase());
    return this.adjusted(tag);
  }

  /** The tag as the element stack names it: SVG's mixed-case names in foreign content, <image> as <img>. */
  private adjusted(tag: Tag): Tag {
    const context = this.foreign[this.foreign.length - 1]!;
    if (context === SVG) {
      const adjusted = SVG_NAMES.get(tag.name);
      return adjusted === undefined ? tag : tagRules(adjusted);
    }
    if (this.foreign.length > 1) {
      const adjusted = SVG_NAMES.get(tag.name);
      if (adjusted !== undefined && this.stack.some((t) => t.name === adjusted)) return tagRules(adjusted);
    }
    if (context === NONE && tag.name === 'image') return tagRules('img');
    return tag;
  }

  private pop(): void {
    const tag = this.stack.pop()!;
    if (tag.context !== -1) this.foreign.pop();
    this.closed(tag);
  }

  private open(tag: Tag): void {
    this.tag = tag;
    this.opening = false;
    if (tag.name === 'form' && this.stack.some((t) => t.name === 'form')) {
      this.tag = undefined;
      return;
    }
    const closes = tag.closes;
    if (closes) while (this.stack.length > 0 && closes.has(this.stack[this.stack.length - 1]!.name)) this.pop();
    if (!tag.isVoid) {
      this.stack.push(tag);
      if (tag.context !== -1) this.foreign.push(tag.context);
    }
    this.opening = true;
  }

  private endOpen(): void {
    const tag = this.tag;
    if (tag === undefined) return;
    if (this.opening) {
      this.opened(tag);
      this.opening = false;
    }
    if (tag.isVoid) this.closed(tag);
    this.tag = undefined;
  }

  /** The start tag ends with '/>': closed at once in foreign content (recognizeSelfClosing is off). */
  private closeCurrent(): void {
    const tag = this.tag;
    this.endOpen();
    if (tag !== undefined && this.stack.length > 0 && this.stack[this.stack.length - 1]!.name === tag.name) this.pop();
  }

  // The Tokenizer's callbacks
  ontext(start: number, end: number): void {
    const page = this.page;
    if (page !== undefined && !this.inTitle) {
      // The page's bytes, copied: no string a piece.
      if (this.hidden !== 0 || start >= end) return;
      const at = this.outLength;
      if (at + end - start > out.length) out = grown(out, at + end - start, at);
      if (end - start > 64) out.set(page.subarray(start, end), at);
      else for (let i = start; i < end; i++) out[at + i - start] = page[i]!;
      this.outLength = at + end - start;
    } else if (start < end) this.text(this.html.slice(start, end));
    else this.text('');
  }
  ontextentity(codepoint: number): void {
    this.text(String.fromCodePoint(codepoint));
  }
  onopentagname(start: number, end: number): void {
    this.open(this.tagAt(start, end));
  }
  onopentagend(): void {
    this.endOpen();
  }
  onselfclosingtag(): void {
    if (this.isInForeignContext()) this.closeCurrent();
    else this.endOpen();
  }
  onclosetag(start: number, end: number): void {
    this.closeTag(this.tagAt(start, end));
  }
  private closeTag(tag: Tag): void {
    if (!tag.isVoid) {
      const stack = this.stack;
      let at = stack.length - 1;
      while (at >= 0 && stack[at]!.name !== tag.name) at--;
      if (at !== -1) while (stack.length > at) this.pop();
      else if (tag.name === 'p') {
        // </p> without a <p>: an empty paragraph
        this.open(tag);
        this.closeCurrent();
      }
    } else if (tag.name === 'br') {
      // </br> is a <br>
      this.opened(tag);
      this.closed(tag);
    }
  }
  /**
   * The page's last character as text (the Tokenizer's quirk where a page ends inside a tag): on
   * a UTF-8 page read as bytes, its whole byte sequence. A character outside the BMP there is half
   * a surrogate pair in the decoded page, which bytes cannot say: that page is read decoded.
   */
  onlastchar(): void {
    const { html, page } = this;
    const n = html.length;
    let start = n - 1;
    if (page !== undefined) {
      // The page's bytes, read as latin1.
      while (start > 0 && (html.charCodeAt(start) & 0xc0) === 0x80) start--;
      if (html.charCodeAt(start) >= 0xf0) throw READ_DECODED;
    }
    this.ontext(start, n);
  }
  oncdata(start: number, end: number, offset: number): void {
    // CDATA is text in foreign content and a comment elsewhere (HTML, recognizeCDATA off).
    if (this.isInForeignContext()) this.text(this.html.slice(start, end - offset));
  }
  onend(): void {
    for (let i = this.stack.length - 1; i >= 0; i--) this.closed(this.stack[i]!);
  }
  onattribname(): void {}
  onattribdata(): void {}
  onattribentity(): void {}
  onattribend(): void {}
  oncomment(): void {}
  ondeclaration(): void {}
  onprocessinginstruction(): void {}
}

/** Thrown by a page read as UTF-8 bytes where bytes cannot give the decoded page's text (a tag name with a non-ASCII character): it is read again decoded. */
export const READ_DECODED = new Error('a page its bytes cannot extract');

/** The text bytes of UTF-8 pages, reused from page to page (grown as a page needs; a page's text is at most its size). */
const OUT_FIRST_BYTES = 1 << 16;
/** Larger than this, the buffer is dropped after its page (the reader's pages are mostly under 1 MiB). */
const OUT_KEPT_BYTES = 4 << 20;
let out = new Uint8Array(OUT_FIRST_BYTES);

/** `s`'s UTF-8 bytes, a character each. */
function utf8AsLatin1(s: string): string {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) >= 0x80) return Buffer.from(s, 'utf8').toString('latin1');
  return s;
}

/** Whether `name` is the page's characters [start, end) lowercased (ASCII). */
function sameName(name: string, html: string, start: number, end: number): boolean {
  if (name.length !== end - start) return false;
  for (let i = 0; i < name.length; i++) {
    let c = html.charCodeAt(start + i);
    if (c >= 0x41 && c <= 0x5a) c |= 0x20;
    if (c !== name.charCodeAt(i)) return false;
  }
  return true;
}

