// AssemblyScript, compiled to html-tokens.wasm by `npm run build` (asc; not part of tsc's build).
//
// A UTF-8 page's bytes to its visible text and title, in WebAssembly: the markup pass of
// indexer/corpus/html-scan.ts's scan() (the same tokens in the same order, those the text depends
// on) drives the element stack of html-stack.ts, which writes the text (html-page.ts). The JS
// side gives the page and takes the text's bytes; it decodes only the entities this does not
// (html-stack.ts). A page this cannot read as the Tokenizer and the Parser would (a tag name with
// a byte beyond ASCII, more than a table's tag names or elements, the Tokenizer's quirk of an
// '&' in a <title> right after part of its end tag) fails (FAIL) and goes the JS way.
//
// Tag names are numbered (html-names.ts), so the stack compares numbers, not characters.

import { forgetNames, nameNumber } from './html-names';
import { at, failed, inPtr, n, outLength, outPtr, startPage, titleLength, titlePtr } from './html-page';
import { adjusted, closeTag, endOpen, endPage, inForeign, lastChar, open, resetStack, pageText, selfClosing, textWithEntities } from './html-stack';

export { defineTag, numberOf } from './html-names';
export { input } from './html-page';
export { defineImage, entityBuffer, setEntityLength } from './html-stack';

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

/** extract(): the text and title are written. */
export const DONE: i32 = 0;
/** extract(): the page needs the JS way. */
export const FAIL: i32 = 2;

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

/** Text [from, to) that nextLt scanned, its entities decoded where it holds an '&'. */
function scannedText(from: i32, to: i32): void {
  if (from >= to) return;
  if (ampBefore) textWithEntities(from, to);
  else pageText(from, to);
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
          // Text in foreign content, a comment elsewhere (HTML, recognizeCDATA off).
          if (inForeign()) pageText(i, j);
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
 * tag, given to the element stack. Returns where text starts after the end tag, or -1 where the page ends first.
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
        if (start < endOfText) content(start, endOfText, rcdata && amp);
        const number = numberOfName(endOfText + 2, i);
        if (number < 0) return FAIL_CONTENT;
        closeTag(number);
        const gt = indexOf(GT, i);
        if (gt == n) {
          lastChar();
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
      if (rcdata && c == AMP) return FAIL_CONTENT;
      matched = c == LT ? 1 : 0;
    }
  }
  if (start < n) content(start, n, rcdata && amp);
  return -1;
}
@inline function content(start: i32, end: i32, entities: bool): void {
  if (entities) textWithEntities(start, end);
  else pageText(start, end);
}
/** specialContent's answer where the page must go the JS way. */
const FAIL_CONTENT: i32 = -2;

/** A page of `length` bytes (copied to input()'s pointer) to its text and title: DONE or FAIL. */
export function extract(length: i32): i32 {
  forgetNames();
  startPage(length);
  resetStack();
  if (run() == FAIL || failed) return FAIL;
  endPage();
  return failed ? FAIL : DONE;
}

/** Where extract()'s text is, and its length; the same of its title (UTF-8 bytes, white space as on the page). */
export function textPtr(): usize {
  return outPtr;
}
export function textLength(): u32 {
  return outLength;
}
export function titleBytesPtr(): usize {
  return titlePtr;
}
export function titleBytesLength(): u32 {
  return titleLength;
}

/** The number of a tag name, or -1 where the page must go the JS way. */
function numberOfName(start: i32, end: i32): i32 {
  const number = nameNumber(start, end);
  if (number < 0) return -1;
  return adjusted(number);
}

function run(): i32 {
  let i = 0;
  let text = 0;
  for (;;) {
    if (failed) return FAIL;
    // Text: up to the next '<'.
    const lt = nextLt(i);
    if (lt == n) {
      scannedText(text, n);
      return DONE;
    }
    scannedText(text, lt);
    text = lt;
    i = lt + 1;
    if (i == n) {
      pageText(lt, n); // a '<' at the end is text
      return DONE;
    }
    const c = at(i);
    if (isAsciiAlpha(c)) {
      let end = i + 1;
      while (end < n && !endsTagName(at(end))) end++;
      const foreign = inForeign();
      if (end == n) {
        // Cut inside the name: the Tokenizer keeps it as text while it may still be a special name.
        if (!foreign && startsSpecialName(i, n)) pageText(i, n);
        return DONE;
      }
      let special = specialNamed(i, end);
      // <svg> and <math> are not special; in foreign content, no element is.
      if (special >= 0 && (KINDS[special] == SVG || foreign)) special = -1;
      const number = numberOfName(i, end);
      if (number < 0) return FAIL;
      open(number);
      const ended = skipAttributes(end);
      if (ended == ENDED_OPEN) endOpen();
      else if (ended == ENDED_SELF_CLOSING) selfClosing();
      else {
        if (ended == -1) lastChar();
        return DONE;
      }
      text = i = tagEnd + 1;
      if (special >= 0) {
        const kind = KINDS[special];
        if (kind == PLAINTEXT) {
          pageText(text, n);
          return DONE;
        }
        i = specialContent(i, NAMES[special], kind == RCDATA);
        if (i == FAIL_CONTENT) return FAIL;
        if (i < 0) return DONE;
        text = i;
      }
    } else if (c == SLASH) {
      i++;
      if (i == n) {
        pageText(lt, n);
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
        const number = numberOfName(i, end);
        if (number < 0) return FAIL;
        closeTag(number);
        const gt = indexOf(GT, end);
        if (gt == n) {
          lastChar();
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
