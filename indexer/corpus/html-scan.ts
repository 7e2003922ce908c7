/**
 * The tokens of an HTML page for its text, in one pass over the decoded string (or over a UTF-8
 * page's bytes read as latin1, where the WebAssembly extraction of html-tokens-wasm.ts does not
 * read it): the same tokens,
 * in the same order, as htmlparser2's Tokenizer (version 12, HTML mode, entities decoded) gives
 * the callbacks of html-elements.ts, but only those the text depends on (tag names, text, entities
 * in text, CDATA). Where the Tokenizer moves one character at a time through a state machine and
 * reports every attribute, this finds the next '<' or '&' of text with indexOf, skips attribute
 * values, comments and the bodies of script, style and iframe the same way, and reports nothing
 * the text does not use. Its quirks are the Tokenizer's, on purpose (e.g. a page cut inside
 * `<scr` keeps "scr" as text; `\x1c` counts as '<' where raw text starts looking for its end
 * tag): the index of a page is the same whichever tokenizes it (test/html-text.test.ts checks it
 * with fast-check against the Tokenizer and the stock Parser, and on every page of the samples).
 *
 * Entities in text decode as the Tokenizer's do (html-entities.ts).
 */
import { decodeEntity, entityText } from './html-entities.js';
import { Extraction, READ_DECODED, tidyTitle, type HtmlText } from './html-elements.js';
import { htmlTokens, type HtmlTokens } from './html-tokens-wasm.js';

const LT = 0x3c;
const GT = 0x3e;
const AMP = 0x26;
const SLASH = 0x2f;
const BANG = 0x21;
const QUESTION = 0x3f;
const DASH = 0x2d;
const DQUOTE = 0x22;
const SQUOTE = 0x27;
const EQ = 0x3d;

/** Raw text (script, style, ...) and RCDATA (title, textarea: entities decoded) end at their end tag. */
const RAW = 1;
const RCDATA = 2;
const PLAINTEXT = 3;
/** The elements whose content is not markup, by lowercased name: [kind, `</name` as char codes]. */
const SPECIAL = new Map<string, readonly [number, Uint8Array]>(
  (
    [
      ['script', RAW], ['style', RAW], ['iframe', RAW], ['xmp', RAW], ['noembed', RAW], ['noframes', RAW],
      ['title', RCDATA], ['textarea', RCDATA], ['plaintext', PLAINTEXT],
    ] as const
  ).map(([name, kind]) => [name, [kind, Uint8Array.from(`</${name}`, (ch) => ch.charCodeAt(0))] as const]),
);
const SPECIAL_NAMES = [...SPECIAL.keys()];

function isWhitespace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x09 || c === 0x0c || c === 0x0d;
}

/** '/', '>' or whitespace: what ends a tag name. */
function endsTagName(c: number): boolean {
  return c === SLASH || c === GT || c === 0x20 || c === 0x0a || c === 0x09 || c === 0x0c || c === 0x0d;
}

function isAsciiAlpha(c: number): boolean {
  return ((c | 0x20) - 0x61) >>> 0 <= 25;
}

/** The special element named by html[start, end) (ASCII case-insensitive), if any. */
function specialNamed(html: string, start: number, end: number): readonly [number, Uint8Array] | undefined {
  const len = end - start;
  if (len < 3 || len > 9) return undefined;
  const first = html.charCodeAt(start) | 0x20;
  // Every special name starts with one of these (a tag name costs one compare, usually).
  if (first !== 0x73 && first !== 0x74 && first !== 0x69 && first !== 0x78 && first !== 0x6e && first !== 0x70) return undefined;
  for (const name of SPECIAL_NAMES) if (name.length === len && sameLetters(html, start, name)) return SPECIAL.get(name);
  return undefined;
}

/** Whether html[start, end) is, letter for letter (ASCII case-insensitive), the start of a special name. */
function startsSpecialName(html: string, start: number, end: number): boolean {
  for (const name of SPECIAL_NAMES) if (end - start <= name.length && sameLetters(html, start, name.slice(0, end - start))) return true;
  return false;
}

function sameLetters(html: string, start: number, lower: string): boolean {
  for (let i = 0; i < lower.length; i++) if ((html.charCodeAt(start + i) | 0x20) !== lower.charCodeAt(i)) return false;
  return true;
}

/** Where a tag's attributes end; what the Tokenizer's attribute states do, without reporting them. */
const BEFORE_NAME = 0;
const IN_NAME = 1;
const AFTER_NAME = 2;
const BEFORE_VALUE = 3;
const UNQUOTED = 4;
const SELF_CLOSING = 5;
/** How a start tag ended: at its index, '>' or '/>', or the page ended inside it. */
const ENDED_OPEN = 0;
const ENDED_SELF_CLOSING = 1;
let tagEnd = 0;

/**
 * Skips a start tag's attributes from `at` (the character after its name) to its '>'; sets
 * `tagEnd` to that '>' and returns how the tag ended, or returns -1 when the page ends inside the
 * tag after a '/' (the Tokenizer then keeps the page's last character as text), -2 elsewhere in it.
 */
function skipAttributes(html: string, at: number): number {
  const n = html.length;
  let state = BEFORE_NAME;
  let i = at;
  while (i < n) {
    const c = html.charCodeAt(i);
    switch (state) {
      case BEFORE_NAME:
        if (c === GT) {
          tagEnd = i;
          return ENDED_OPEN;
        }
        if (c === SLASH) state = SELF_CLOSING;
        else if (!isWhitespace(c)) state = IN_NAME;
        break;
      case SELF_CLOSING:
        if (c === GT) {
          tagEnd = i;
          return ENDED_SELF_CLOSING;
        }
        if (!isWhitespace(c)) {
          state = BEFORE_NAME;
          continue; // the character again, in BEFORE_NAME
        }
        break;
      case IN_NAME:
        if (c === EQ || endsTagName(c)) {
          state = AFTER_NAME;
          continue;
        }
        break;
      case AFTER_NAME:
        if (c === EQ) state = BEFORE_VALUE;
        else if (c === SLASH || c === GT) {
          state = BEFORE_NAME;
          continue;
        } else if (!isWhitespace(c)) state = IN_NAME;
        break;
      case BEFORE_VALUE:
        if (c === DQUOTE || c === SQUOTE) {
          // Entities in a value never reach its closing quote (they are letters, digits, '#' and ';').
          const close = html.indexOf(c === DQUOTE ? '"' : "'", i + 1);
          if (close < 0) return -2;
          i = close;
          state = BEFORE_NAME;
        } else if (!isWhitespace(c)) {
          state = UNQUOTED;
          continue;
        }
        break;
      default: // UNQUOTED
        if (isWhitespace(c) || c === GT) {
          state = BEFORE_NAME;
          continue;
        }
    }
    i++;
  }
  return state === SELF_CLOSING ? -1 : -2;
}

/** Where a comment's end ('-->', '--!>', or '>' right after '<!--' or '<!---') is, from `start` (after '<!--'); -1 if none. */
function commentEnd(html: string, start: number): number {
  const n = html.length;
  // The Tokenizer's match of the sequence '--!>' (its '!' optional), kept as is.
  let matched = 0;
  for (let i = start; i < n; i++) {
    const c = html.charCodeAt(i);
    if (matched <= 1 && i === start + matched && c === GT) return i;
    if (matched === 2 && c === GT) return i;
    if (matched === 3 && c !== GT) matched = c === DASH ? 1 : 0;
    else if (c === COMMENT_END[matched]) {
      if (++matched === 4) return i;
    } else if (matched === 0) {
      const dash = html.indexOf('-', i + 1);
      if (dash < 0) return -1;
      i = dash;
      matched = 1;
    } else if (c !== COMMENT_END[matched - 1]) matched = 0;
  }
  return -1;
}
const COMMENT_END = [DASH, DASH, BANG, GT];

let extraction: Extraction | undefined;

export function htmlToText(html: string): HtmlText {
  const x = (extraction ??= new Extraction());
  x.reset(html);
  scan(html, x);
  x.onend();
  return x.take();
}

/**
 * htmlToText of a page given as bytes that are valid UTF-8 (the caller checks), without decoding
 * the page: in WebAssembly where html-tokens-wasm.ts takes the page, else here, its bytes scanned
 * as one-byte characters (latin1, a copy), where each UTF-8 sequence is characters of 0x80 and
 * above, which no markup test matches; a sequence never
 * spans a text boundary, since every boundary is an ASCII character. So the tokens, elements and
 * text pieces are the decoded page's, and only the title and text are decoded, once joined
 * (about a third of an HTML page's bytes). A tag name with a non-ASCII character (lowercased by
 * Unicode rules, which do not act on bytes) sends the page the decoded way, as does a cut page
 * whose last character outside the BMP is half kept (Extraction.onlastchar).
 */
export function htmlUtf8ToText(page: Buffer, tokens: HtmlTokens | undefined = htmlTokens()): HtmlText {
  const read = htmlUtf8ToTextBytes(page, tokens);
  return 'textUtf8' in read ? { title: read.title, text: utf8(read.textUtf8) } : read;
}

/**
 * htmlUtf8ToText with the text left as its UTF-8 bytes (`textUtf8`, a view valid until the next
 * page is extracted) where the page was read as bytes: no string of it is made.
 */
export function htmlUtf8ToTextBytes(page: Buffer, tokens: HtmlTokens | undefined = htmlTokens()): HtmlText | { title: string; textUtf8: Uint8Array } {
  if (tokens && page.length <= WASM_PAGE_MAX_BYTES) {
    const read = tokens.extract(page);
    if (read) return { title: read.title.length > 0 ? tidyTitle(utf8(read.title)) : '', textUtf8: read.text };
  }
  // The JS scan, of the bytes as a latin1 string.
  const x = (extraction ??= new Extraction());
  try {
    const html = page.toString('latin1');
    x.reset(html, page);
    scan(html, x);
  } catch (err) {
    if (err !== READ_DECODED) throw err;
    return htmlToText(page.toString('utf8'));
  }
  x.onend();
  const { title, text } = x.takeUtf8();
  return { title, textUtf8: text };
}

/** UTF-8 bytes (a view of htmlUtf8ToTextBytes' text) as a string. */
export function utf8(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('utf8');
}

/**
 * Pages larger than this go the JS way: the instance's memory, which holds the page and room for
 * its text and title (about three times the page), grows to the largest page it reads and never
 * shrinks (most pages are under 1 MiB; Common Crawl cuts its records at 1 MiB).
 */
const WASM_PAGE_MAX_BYTES = 4 << 20;

/** Feeds `x` the page's tokens, up to and not including the end (`onend`). */
function scan(html: string, x: Extraction): void {
  const n = html.length;
  /** The start of text not yet given to `x`. */
  let text = 0;
  let i = 0;
  let amp = -1;
  for (;;) {
    // Text: up to the next '<', decoding entities.
    let lt = html.indexOf('<', i);
    if (lt < 0) lt = n;
    if (amp < i) {
      amp = html.indexOf('&', i);
      if (amp < 0) amp = n;
    }
    while (amp < lt) {
      const taken = decodeEntity(html, amp);
      if (taken > 0) {
        if (text < amp) x.ontext(text, amp);
        x.entity(entityText());
        text = amp + taken;
        // An entity ends before a '<' (its characters are letters, digits, '#' and ';').
      }
      amp = html.indexOf('&', taken > 0 ? amp + taken : amp + 1);
      if (amp < 0) amp = n;
    }
    if (lt === n) {
      if (text < n) x.ontext(text, n);
      return;
    }
    if (text < lt) x.ontext(text, lt);
    text = lt;
    i = lt + 1;
    if (i === n) return x.ontext(lt, n); // a '<' at the end is text
    const c = html.charCodeAt(i);
    if (isAsciiAlpha(c)) {
      // A start tag: its name, then its attributes.
      const foreign = x.isInForeignContext();
      let end = i + 1;
      while (end < n && !endsTagName(html.charCodeAt(end))) end++;
      if (end === n) {
        // Cut inside the name: the Tokenizer keeps it as text while it may still be a special name.
        if (!foreign && startsSpecialName(html, i, n)) x.ontext(i, n);
        return;
      }
      const kind = foreign ? undefined : specialNamed(html, i, end);
      x.onopentagname(i, end);
      const ended = skipAttributes(html, end);
      if (ended < 0) {
        if (ended === -1) x.onlastchar();
        return;
      }
      if (ended === ENDED_SELF_CLOSING) x.onselfclosingtag();
      else x.onopentagend();
      text = i = tagEnd + 1;
      if (kind) {
        if (kind[0] === PLAINTEXT) {
          if (text < n) x.ontext(text, n);
          return;
        }
        i = specialContent(html, x, i, kind[1], kind[0] === RCDATA);
        if (i < 0) return;
        text = i;
      }
    } else if (c === SLASH) {
      // An end tag.
      i++;
      if (i === n) return x.ontext(lt, n);
      const d = html.charCodeAt(i);
      if (d === GT) {
        text = ++i; // '</>' is nothing
        continue;
      }
      if (isAsciiAlpha(d)) {
        let end = i + 1;
        while (end < n && !endsTagName(html.charCodeAt(end))) end++;
        if (end === n) return;
        x.onclosetag(i, end);
        const gt = html.indexOf('>', end);
        // Cut before its '>': the Tokenizer keeps the page's last character as text.
        if (gt < 0) return x.onlastchar();
        text = i = gt + 1;
      } else {
        // '</' and anything else: a bogus comment, to the next '>'.
        const gt = html.indexOf('>', i);
        if (gt < 0) return;
        text = i = gt + 1;
      }
    } else if (c === BANG) {
      i = markupDeclaration(html, x, i + 1);
      if (i < 0) return;
      text = i;
    } else if (c === QUESTION) {
      // '<?': a bogus comment, to the next '>'.
      const gt = html.indexOf('>', i + 1);
      if (gt < 0) return;
      text = i = gt + 1;
    }
    // else the '<' is text, and `c` is looked at again as text
  }
}

/**
 * The content of a raw-text or RCDATA element from `start` (after its start tag), up to and
 * including its end tag: given to `x` as text, then the end tag. Returns where text starts after
 * the end tag's '>', or -1 where the page ends first. `close` is '</name'.
 */
function specialContent(html: string, x: Extraction, start: number, close: Uint8Array, rcdata: boolean): number {
  const n = html.length;
  let text = start;
  let matched = 0;
  for (let i = start; i < n; i++) {
    const c = html.charCodeAt(i);
    if (matched === close.length) {
      if (endsTagName(c)) {
        const endOfText = i - close.length;
        if (text < endOfText) x.ontext(text, endOfText);
        x.onclosetag(endOfText + 2, i);
        const gt = html.indexOf('>', i);
        if (gt < 0) {
          x.onlastchar();
          return -1;
        }
        return gt + 1;
      }
      matched = 0;
    }
    // `| 0x20` lowercases a letter, and (as in the Tokenizer) takes \x1c for '<' and \x0f for '/'.
    if ((c | 0x20) === close[matched]) matched++;
    else if (matched === 0) {
      if (rcdata) {
        if (c === AMP) {
          const taken = decodeEntity(html, i);
          if (taken > 0) {
            if (text < i) x.ontext(text, i);
            x.entity(entityText());
            text = i + taken;
            i = text - 1;
          }
        }
      } else {
        const lt = html.indexOf('<', i + 1);
        if (lt < 0) break;
        i = lt;
        matched = 1;
      }
    } else matched = c === LT ? 1 : 0;
  }
  if (text < n) x.ontext(text, n);
  return -1;
}

const CDATA = 'CDATA[';

/**
 * After '<!' at `at`: a comment, CDATA section, doctype or bogus comment. Returns where text
 * starts after it, or -1 where the page ends inside it (nothing of it is text then).
 */
function markupDeclaration(html: string, x: Extraction, at: number): number {
  const n = html.length;
  if (at >= n) return -1;
  const c = html.charCodeAt(at);
  let bogusFrom: number;
  if (c === 0x5b) {
    // '<![': CDATA (text in foreign content), else a bogus comment from the first character that differs.
    let i = at + 1;
    let k = 0;
    while (k < CDATA.length && i < n && html.charCodeAt(i) === CDATA.charCodeAt(k)) {
      i++;
      k++;
    }
    if (i === n && k < CDATA.length) return -1;
    if (k === CDATA.length) {
      const close = html.indexOf(']]>', i);
      if (close < 0) return -1;
      x.oncdata(i, close + 2, 2);
      return close + 3;
    }
    bogusFrom = i;
  } else if ((c | 0x20) === 0x64) {
    // '<!d': a doctype (to the next '>') if the letters go on as 'doctype', else a bogus comment.
    let k = 1;
    let i = at + 1;
    for (; i < n; i++) {
      if (k === DOCTYPE.length) break;
      const d = html.charCodeAt(i);
      if ((d | 0x20) === DOCTYPE.charCodeAt(k)) k++;
      else if (d === GT) return i + 1;
      else {
        i++;
        break;
      }
    }
    bogusFrom = i;
  } else if (c === GT) return at + 1;
  else if (c === DASH) {
    if (at + 1 >= n) return -1;
    const d = html.charCodeAt(at + 1);
    if (d === DASH) {
      const end = commentEnd(html, at + 2);
      return end < 0 ? -1 : end + 1;
    }
    if (d === GT) return at + 2;
    bogusFrom = at + 2;
  } else bogusFrom = at + 1;
  const gt = html.indexOf('>', bogusFrom);
  return gt < 0 ? -1 : gt + 1;
}
const DOCTYPE = 'doctype';
