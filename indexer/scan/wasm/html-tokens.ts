// AssemblyScript, compiled to html-tokens.wasm by `npm run build` (asc; not part of tsc's build).
//
// The markup pass of indexer/corpus/html-scan.ts's scan() over a page's bytes in linear memory:
// the same tokens in the same order (those the text depends on), written as events for the JS
// side (indexer/corpus/html-wasm.ts), which keeps the element stack and the text. It does in
// WebAssembly what the JS scan does on a latin1 copy of the page with indexOf and charCodeAt
// (the page's bytes to its tokens, about half of extracting the text). Entities are left to the
// JS side (the `entities` package's decoder): an event says where each one may start.
//
// Foreign content (SVG, MathML) is the JS side's to know, from its element stack: once a page has
// opened an <svg> or <math>, the scan asks (ASK) before it reads a raw-text or RCDATA element's
// content, and CDATA goes out as an event the JS side keeps only in foreign content. A '&' that
// the Tokenizer does not decode inside a <title> or <textarea> (right after part of its end tag)
// sends the page the JS way (BAIL).
//
// Memory: the tag-name table (NAME_SLOTS slots and their names' bytes, kept from page to page),
// the page's bytes at inPtr (grown as pages need), then the events: EVENT_CAP quadruples of i32
// (kind, a, b, c). When the events are full the scan stops between two tokens (FULL); the JS side
// takes them and calls resume().
//
// Tag names are numbered here (c of EV_OPEN and EV_CLOSE: a number a lowercased ASCII name keeps
// in this instance, or -1), so the JS side looks a tag up by number, not by its characters.

const LT: u32 = 0x3c;
const GT: u32 = 0x3e;
const AMP: u32 = 0x26;
const SLASH: u32 = 0x2f;
const BANG: u32 = 0x21;
const QUESTION: u32 = 0x3f;
const DASH: u32 = 0x2d;
const DQUOTE: u32 = 0x22;
const SQUOTE: u32 = 0x27;
const EQ: u32 = 0x3d;

// Events (kind, a, b).
/** Text [a, b) with no '&'. */
export const EV_TEXT: i32 = 1;
/** Text [a, b) with an '&': its entities are decoded (every '&' in it may start one). */
export const EV_TEXT_AMP: i32 = 2;
/** Text [a, b) that is not decoded (raw text elements, and the Tokenizer's quirks). */
export const EV_RAW: i32 = 3;
/** A start tag's name [a, b); c its number (or -1): a tag that ends with '/>' (EV_SELF_CLOSE follows), or with the page. */
export const EV_OPEN: i32 = 4;
/** A start tag's name [a, b), c its number (or -1), ended with '>' (most tags: one event, not EV_OPEN and its end). */
export const EV_OPEN_TAG: i32 = 5;
/** The start tag ended with '/>'. */
export const EV_SELF_CLOSE: i32 = 6;
/** An end tag's name [a, b); c its number (or -1). */
export const EV_CLOSE: i32 = 7;
/** The page's last character is text (the page ended inside a tag). */
export const EV_LAST_CHAR: i32 = 8;
/** A CDATA section's content [a, b): text in foreign content, nothing elsewhere. */
export const EV_CDATA: i32 = 9;
/** The page ended inside the name [a, b) of what may be a raw-text element: text outside foreign content. */
export const EV_CUT_NAME: i32 = 10;

/** scan()/resume(): the page is done; the events are all out. */
export const DONE: i32 = 0;
/** The events are full: take them, then resume(). */
export const FULL: i32 = 1;
/** The page needs the JS scan. */
export const BAIL: i32 = 2;
/** Take the events, then answer(whether the element stack is in foreign content). */
export const ASK: i32 = 3;

const EVENT_CAP: u32 = 16384;
/** Room left for one token's events (text, a tag and its raw content, an end tag). */
const TOKEN_EVENTS: u32 = 8;
const PAD: u32 = 16;

let inPtr: usize = 0;
let inCap: u32 = 0;
let evPtr: usize = 0;
let events: u32 = 0;
let n: i32 = 0;
// Where a FULL scan resumes: the next character, and the start of text not yet given out.
let atI: i32 = 0;
let atText: i32 = 0;
/** The page has opened an <svg> or <math>: a raw-text element may be in foreign content. */
let sawForeign = false;
/** The '<' of the start tag the last ASK was about, and the answer. */
let askedAt: i32 = -1;
let foreignAnswer = false;

/** Makes room for a page of `length` bytes; returns where to copy it. */
export function input(length: u32): usize {
  if (evPtr === 0 || length + PAD > inCap) {
    const cap = (max<u32>(length + PAD, max<u32>(inCap * 2, 1 << 16)) + 15) & ~15;
    inPtr = (__heap_base + NAME_TABLE_BYTES + 15) & ~(<usize>15);
    const bytes = inPtr + <usize>cap + <usize>EVENT_CAP * 16;
    const have = <usize>memory.size() << 16;
    if (bytes > have) memory.grow(<i32>((bytes - have + 0xffff) >> 16));
    inCap = cap;
    evPtr = inPtr + <usize>cap;
  }
  return inPtr;
}

export function eventsPtr(): usize {
  return evPtr;
}

export function eventCount(): u32 {
  return events;
}

@inline function at(i: i32): u32 {
  return <u32>load<u8>(inPtr + <usize>i);
}

@inline function emit(kind: i32, a: i32, b: i32): void {
  emit4(kind, a, b, 0);
}

@inline function emit4(kind: i32, a: i32, b: i32, c: i32): void {
  const p = evPtr + <usize>events * 16;
  store<i32>(p, kind);
  store<i32>(p, a, 4);
  store<i32>(p, b, 8);
  store<i32>(p, c, 12);
  events++;
}

// The tag-name table: open addressing over NAME_SLOTS slots of (hash, number + 1, length, pool
// offset); the names' lowercased bytes in a pool after them. Full, a new name gets -1.
const NAME_SLOTS: u32 = 4096;
const NAME_POOL: u32 = 64 * 1024;
const MAX_NAME: i32 = 32;
const NAME_TABLE_BYTES: usize = <usize>NAME_SLOTS * 16 + <usize>NAME_POOL;
let names: u32 = 0;
let poolUsed: u32 = 0;

/** The number of the tag name [start, end), lowercased; -1 for a name with a non-ASCII byte, a long one, or none left. */
function nameNumber(start: i32, end: i32): i32 {
  const len = end - start;
  if (len > MAX_NAME) return -1;
  let h: u32 = <u32>len;
  for (let i = start; i < end; i++) {
    let c = at(i);
    if (c >= 0x80) return -1;
    if (c - 0x41 <= 25) c |= 0x20;
    h = (h ^ c) * 0x01000193;
  }
  const table = __heap_base;
  const pool = table + <usize>NAME_SLOTS * 16;
  let slot = (h ^ (h >> 15)) & (NAME_SLOTS - 1);
  for (;;) {
    const p = table + <usize>slot * 16;
    const number = load<i32>(p, 4);
    if (number == 0) break;
    if (load<u32>(p) == h && load<i32>(p, 8) == len) {
      const name = pool + <usize>load<u32>(p, 12);
      let same = true;
      for (let k = 0; k < len; k++) {
        let c = at(start + k);
        if (c - 0x41 <= 25) c |= 0x20;
        if (<u32>load<u8>(name + <usize>k) != c) {
          same = false;
          break;
        }
      }
      if (same) return number - 1;
    }
    slot = (slot + 1) & (NAME_SLOTS - 1);
  }
  if (names >= NAME_SLOTS / 2 || poolUsed + <u32>len > NAME_POOL) return -1;
  const p = table + <usize>slot * 16;
  store<u32>(p, h);
  store<i32>(p, <i32>names + 1, 4);
  store<i32>(p, len, 8);
  store<u32>(p, poolUsed, 12);
  for (let k = 0; k < len; k++) {
    let c = at(start + k);
    if (c - 0x41 <= 25) c |= 0x20;
    store<u8>(pool + <usize>poolUsed + <usize>k, <u8>c);
  }
  poolUsed += <u32>len;
  names++;
  return <i32>names - 1;
}

@inline function isWhitespace(c: u32): bool {
  return c == 0x20 || c == 0x0a || c == 0x09 || c == 0x0c || c == 0x0d;
}

@inline function endsTagName(c: u32): bool {
  return c == SLASH || c == GT || c == 0x20 || c == 0x0a || c == 0x09 || c == 0x0c || c == 0x0d;
}

@inline function isAsciiAlpha(c: u32): bool {
  return (c | 0x20) - 0x61 <= 25;
}

/** Which of the 16 bytes at i are before the page's end (the input is padded: a load past it reads garbage). */
@inline function valid(i: i32): i32 {
  return n - i >= 16 ? 0xffff : (1 << (n - i)) - 1;
}

/** The first i in [from, n) with byte c, or n (16 bytes a step). */
function indexOf(c: u32, from: i32): i32 {
  const want = i8x16.splat(<i8>c);
  for (let i = from; i < n; i += 16) {
    const m = i8x16.bitmask(i8x16.eq(v128.load(inPtr + <usize>i), want)) & valid(i);
    if (m != 0) return i + ctz<i32>(m);
  }
  return n;
}

/** Whether an '&' came before the '<' that nextLt found. */
let ampBefore = false;

/** indexOf('<', from), noting in ampBefore whether an '&' comes first. */
function nextLt(from: i32): i32 {
  const lt = i8x16.splat(<i8>LT);
  const amp = i8x16.splat(<i8>AMP);
  ampBefore = false;
  for (let i = from; i < n; i += 16) {
    const v = v128.load(inPtr + <usize>i);
    const ok = valid(i);
    const ml = i8x16.bitmask(i8x16.eq(v, lt)) & ok;
    const ma = i8x16.bitmask(i8x16.eq(v, amp)) & ok;
    if (ml != 0) {
      const k = ctz<i32>(ml);
      if ((ma & ((1 << k) - 1)) != 0) ampBefore = true;
      return i + k;
    }
    if (ma != 0) ampBefore = true;
  }
  return n;
}

/** Text [from, to) that nextLt scanned: EV_TEXT, or EV_TEXT_AMP where it holds an '&'. */
function emitText(from: i32, to: i32): void {
  if (from < to) emit(ampBefore ? EV_TEXT_AMP : EV_TEXT, from, to);
}

// The special elements (lowercase names): the kind of their content and `</name` to end it.
const RAW: i32 = 1;
const RCDATA: i32 = 2;
const PLAINTEXT: i32 = 3;
const SVG: i32 = 4;
const NAMES: StaticArray<string> = ['script', 'style', 'iframe', 'xmp', 'noembed', 'noframes', 'title', 'textarea', 'plaintext', 'svg', 'math'];
const KINDS: StaticArray<i32> = [RAW, RAW, RAW, RAW, RAW, RAW, RCDATA, RCDATA, PLAINTEXT, SVG, SVG];

/** Whether the page's [start, start + length) is `name`'s first `length` letters (ASCII case-insensitive). */
function sameLetters(start: i32, name: string, length: i32): bool {
  for (let k = 0; k < length; k++) if ((at(start + k) | 0x20) != <u32>name.charCodeAt(k)) return false;
  return true;
}

/** The index in NAMES of the element named [start, end), or -1. */
function specialNamed(start: i32, end: i32): i32 {
  const len = end - start;
  if (len < 3 || len > 9) return -1;
  const first = at(start) | 0x20;
  if (first != 0x73 && first != 0x74 && first != 0x69 && first != 0x78 && first != 0x6e && first != 0x70 && first != 0x6d) return -1;
  for (let k = 0; k < NAMES.length; k++) {
    const name = NAMES[k];
    if (name.length == len && sameLetters(start, name, len)) return k;
  }
  return -1;
}

/** Whether [start, end) is the start of a raw-text, RCDATA or plaintext element's name. */
function startsSpecialName(start: i32, end: i32): bool {
  for (let k = 0; k < NAMES.length; k++) {
    if (KINDS[k] == SVG) continue;
    const name = NAMES[k];
    if (end - start <= name.length && sameLetters(start, name, end - start)) return true;
  }
  return false;
}

const BEFORE_NAME = 0;
const IN_NAME = 1;
const AFTER_NAME = 2;
const BEFORE_VALUE = 3;
const UNQUOTED = 4;
const SELF_CLOSING = 5;
const ENDED_OPEN = 0;
const ENDED_SELF_CLOSING = 1;
let tagEnd: i32 = 0;

/** html-scan.ts skipAttributes: how the start tag from `from` ends (tagEnd its '>'), -1 or -2 if the page ends in it. */
function skipAttributes(from: i32): i32 {
  let state = BEFORE_NAME;
  let i = from;
  while (i < n) {
    const c = at(i);
    if (state == BEFORE_NAME) {
      if (c == GT) {
        tagEnd = i;
        return ENDED_OPEN;
      }
      if (c == SLASH) state = SELF_CLOSING;
      else if (!isWhitespace(c)) state = IN_NAME;
    } else if (state == SELF_CLOSING) {
      if (c == GT) {
        tagEnd = i;
        return ENDED_SELF_CLOSING;
      }
      if (!isWhitespace(c)) {
        state = BEFORE_NAME;
        continue;
      }
    } else if (state == IN_NAME) {
      if (c == EQ || endsTagName(c)) {
        state = AFTER_NAME;
        continue;
      }
    } else if (state == AFTER_NAME) {
      if (c == EQ) state = BEFORE_VALUE;
      else if (c == SLASH || c == GT) {
        state = BEFORE_NAME;
        continue;
      } else if (!isWhitespace(c)) state = IN_NAME;
    } else if (state == BEFORE_VALUE) {
      if (c == DQUOTE || c == SQUOTE) {
        const close = indexOf(c, i + 1);
        if (close == n) return -2;
        i = close;
        state = BEFORE_NAME;
      } else if (!isWhitespace(c)) {
        state = UNQUOTED;
        continue;
      }
    } else {
      // UNQUOTED
      if (isWhitespace(c) || c == GT) {
        state = BEFORE_NAME;
        continue;
      }
    }
    i++;
  }
  return state == SELF_CLOSING ? -1 : -2;
}

/** html-scan.ts commentEnd: the comment's end from `start` (after '<!--'), or -1. */
function commentEnd(start: i32): i32 {
  let matched = 0;
  for (let i = start; i < n; i++) {
    const c = at(i);
    if (matched <= 1 && i == start + matched && c == GT) return i;
    if (matched == 2 && c == GT) return i;
    if (matched == 3 && c != GT) matched = c == DASH ? 1 : 0;
    else if (c == commentChar(matched)) {
      if (++matched == 4) return i;
    } else if (matched == 0) {
      const dash = indexOf(DASH, i + 1);
      if (dash == n) return -1;
      i = dash;
      matched = 1;
    } else if (c != commentChar(matched - 1)) matched = 0;
  }
  return -1;
}

@inline function commentChar(k: i32): u32 {
  return k < 2 ? DASH : k == 2 ? BANG : GT;
}

/** html-scan.ts markupDeclaration: after '<!' at `from`, where text starts after it, or -1. */
function markupDeclaration(from: i32): i32 {
  if (from >= n) return -1;
  const c = at(from);
  let bogusFrom: i32;
  if (c == 0x5b) {
    // '<![': CDATA (a comment outside foreign content), else a bogus comment.
    const cdata = 'CDATA[';
    let i = from + 1;
    let k = 0;
    while (k < cdata.length && i < n && at(i) == <u32>cdata.charCodeAt(k)) {
      i++;
      k++;
    }
    if (i == n && k < cdata.length) return -1;
    if (k == cdata.length) {
      for (let j = i; j + 2 < n; j++) {
        if (at(j) == 0x5d && at(j + 1) == 0x5d && at(j + 2) == GT) {
          emit(EV_CDATA, i, j);
          return j + 3;
        }
      }
      return -1;
    }
    bogusFrom = i;
  } else if ((c | 0x20) == 0x64) {
    const doctype = 'doctype';
    let k = 1;
    let i = from + 1;
    for (; i < n; i++) {
      if (k == doctype.length) break;
      const d = at(i);
      if ((d | 0x20) == <u32>doctype.charCodeAt(k)) k++;
      else if (d == GT) return i + 1;
      else {
        i++;
        break;
      }
    }
    bogusFrom = i;
  } else if (c == GT) return from + 1;
  else if (c == DASH) {
    if (from + 1 >= n) return -1;
    const d = at(from + 1);
    if (d == DASH) {
      const end = commentEnd(from + 2);
      return end < 0 ? -1 : end + 1;
    }
    if (d == GT) return from + 2;
    bogusFrom = from + 2;
  } else bogusFrom = from + 1;
  const gt = indexOf(GT, bogusFrom);
  return gt == n ? -1 : gt + 1;
}

/**
 * html-scan.ts specialContent: a raw-text or RCDATA element's content from `start` and its end
 * tag, as events. Returns where text starts after the end tag, or -1 where the page ends first.
 */
function specialContent(start: i32, name: string, rcdata: bool): i32 {
  const closeLength = name.length + 2;
  let matched = 0;
  let amp = false;
  for (let i = start; i < n; i++) {
    const c = at(i);
    if (matched == closeLength) {
      if (endsTagName(c)) {
        const endOfText = i - closeLength;
        if (start < endOfText) emit(contentKind(rcdata, amp), start, endOfText);
        emit4(EV_CLOSE, endOfText + 2, i, nameNumber(endOfText + 2, i));
        const gt = indexOf(GT, i);
        if (gt == n) {
          emit(EV_LAST_CHAR, 0, 0);
          return -1;
        }
        return gt + 1;
      }
      matched = 0;
    }
    // `| 0x20` lowercases a letter, and (as in the Tokenizer) takes \x1c for '<' and \x0f for '/'.
    const want: u32 = matched == 0 ? LT : matched == 1 ? SLASH : <u32>name.charCodeAt(matched - 2);
    if ((c | 0x20) == want) matched++;
    else if (matched == 0) {
      if (rcdata) {
        if (c == AMP) amp = true;
      } else {
        const lt = indexOf(LT, i + 1);
        if (lt == n) break;
        i = lt;
        matched = 1;
      }
    } else {
      // An '&' right after part of the end tag is not decoded (the Tokenizer's quirk): the JS scan's.
      if (rcdata && c == AMP) return BAIL_CONTENT;
      matched = c == LT ? 1 : 0;
    }
  }
  if (start < n) emit(contentKind(rcdata, amp), start, n);
  return -1;
}
@inline function contentKind(rcdata: bool, amp: bool): i32 {
  return !rcdata ? EV_RAW : amp ? EV_TEXT_AMP : EV_TEXT;
}
/** specialContent's answer where the page must go the JS way. */
const BAIL_CONTENT: i32 = -2;

/** Scans a page of `length` bytes (copied to input()'s pointer): DONE, FULL or BAIL. */
export function scan(length: i32): i32 {
  n = length;
  events = 0;
  atI = 0;
  atText = 0;
  sawForeign = false;
  askedAt = -1;
  return run();
}

/** Goes on after ASK, with the events emptied: whether the element stack is in foreign content. */
export function answer(foreign: bool): i32 {
  foreignAnswer = foreign;
  askedAt = atI;
  events = 0;
  return run();
}

/** Goes on after FULL, with the events emptied. */
export function resume(): i32 {
  events = 0;
  return run();
}

function run(): i32 {
  let i = atI;
  let text = atText;
  for (;;) {
    if (events + TOKEN_EVENTS > EVENT_CAP) {
      atI = i;
      atText = text;
      return FULL;
    }
    // Text: up to the next '<'.
    const lt = nextLt(i);
    if (lt == n) {
      emitText(text, n);
      return DONE;
    }
    emitText(text, lt);
    text = lt;
    i = lt + 1;
    if (i == n) {
      emit(EV_RAW, lt, n); // a '<' at the end is text
      return DONE;
    }
    const c = at(i);
    if (isAsciiAlpha(c)) {
      let end = i + 1;
      while (end < n && !endsTagName(at(end))) end++;
      if (end == n) {
        if (startsSpecialName(i, n)) emit(EV_CUT_NAME, i, n);
        return DONE;
      }
      let special = specialNamed(i, end);
      if (special >= 0 && KINDS[special] == SVG) {
        sawForeign = true;
        special = -1;
      } else if (special >= 0 && sawForeign) {
        // In foreign content this is an element like any other: the element stack knows.
        if (askedAt != lt) {
          atI = lt;
          atText = lt;
          return ASK;
        }
        if (foreignAnswer) special = -1;
      }
      const number = nameNumber(i, end);
      const ended = skipAttributes(end);
      if (ended == ENDED_OPEN) emit4(EV_OPEN_TAG, i, end, number);
      else {
        emit4(EV_OPEN, i, end, number);
        if (ended < 0) {
          if (ended == -1) emit(EV_LAST_CHAR, 0, 0);
          return DONE;
        }
        emit(EV_SELF_CLOSE, 0, 0);
      }
      text = i = tagEnd + 1;
      if (special >= 0) {
        const kind = KINDS[special];
        if (kind == PLAINTEXT) {
          if (text < n) emit(EV_RAW, text, n);
          return DONE;
        }
        i = specialContent(i, NAMES[special], kind == RCDATA);
        if (i == BAIL_CONTENT) return BAIL;
        if (i < 0) return DONE;
        text = i;
      }
    } else if (c == SLASH) {
      i++;
      if (i == n) {
        emit(EV_RAW, lt, n);
        return DONE;
      }
      const d = at(i);
      if (d == GT) {
        text = ++i;
        continue;
      }
      if (isAsciiAlpha(d)) {
        let end = i + 1;
        while (end < n && !endsTagName(at(end))) end++;
        if (end == n) return DONE;
        emit4(EV_CLOSE, i, end, nameNumber(i, end));
        const gt = indexOf(GT, end);
        if (gt == n) {
          emit(EV_LAST_CHAR, 0, 0);
          return DONE;
        }
        text = i = gt + 1;
      } else {
        const gt = indexOf(GT, i);
        if (gt == n) return DONE;
        text = i = gt + 1;
      }
    } else if (c == BANG) {
      i = markupDeclaration(i + 1);
      if (i < 0) return DONE;
      text = i;
    } else if (c == QUESTION) {
      const gt = indexOf(GT, i + 1);
      if (gt == n) return DONE;
      text = i = gt + 1;
    }
    // else the '<' is text
  }
  return DONE; // not reached
}
