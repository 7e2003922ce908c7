// AssemblyScript, part of html-tokens.wasm: the element stack of indexer/corpus/html-elements.ts
// (its Extraction, which follows htmlparser2's Parser) fed by the markup pass, and where each
// piece of text goes: the page's text, its <title>, or nowhere. The JS Extraction stays the
// reference and the way of the pages this cannot read (html-page.ts's `failed`); the tests hold
// the two to the same bytes. Names are numbers here (html-names.ts), the same name the same number.

import { BLOCK, BR, FORM, HIDDEN, IMAGE, P, TITLE, VOID, closableOf, closesOf, contextOf, flagsOf, svgAdjustedOf } from './html-names';
import { at, bytesToText, copyToText, copyToTitle, fail, inPtr, n, restartTitle, separate } from './html-page';

// Foreign-content contexts.
const NONE: i32 = 0;
const SVG: i32 = 1;

const STACK_CAP: i32 = 8192;
const stack: usize = memory.data(STACK_CAP * 4, 4);
const foreign: usize = memory.data(STACK_CAP + 1);
let depth: i32 = 0;
let foreignDepth: i32 = 1;
let hidden: i32 = 0;
let inTitle = false;
let titleDone = false;
/** The start tag being read, or -1 (none, or a second <form>, which the Parser ignores). */
let tag: i32 = -1;
let opening = false;
let imgNumber: i32 = 0;

/** <image> outside foreign content is this number's (<img>). */
export function defineImage(img: i32): void {
  imgNumber = img;
}

export function resetStack(): void {
  depth = 0;
  foreignDepth = 1;
  store<u8>(foreign, <u8>NONE);
  hidden = 0;
  inTitle = false;
  titleDone = false;
  tag = -1;
  opening = false;
}

@inline function top(): i32 {
  return load<i32>(stack + (<usize>(depth - 1) << 2));
}

@inline function foreignTop(): i32 {
  return <i32>load<u8>(foreign + <usize>(foreignDepth - 1));
}

export function inForeign(): bool {
  return foreignTop() != NONE;
}

function stackHas(number: i32): bool {
  for (let i = depth - 1; i >= 0; i--) if (load<i32>(stack + (<usize>i << 2)) == number) return true;
  return false;
}

/** The number as the stack names the element: SVG's spelling in foreign content, <image> as <img>. */
export function adjusted(number: i32): i32 {
  const context = foreignTop();
  if (context == SVG) {
    const svg = svgAdjustedOf(number);
    return svg >= 0 ? svg : number;
  }
  if (foreignDepth > 1) {
    const svg = svgAdjustedOf(number);
    if (svg >= 0 && stackHas(svg)) return svg;
  }
  if (context == NONE && (flagsOf(number) & IMAGE) != 0) return imgNumber;
  return number;
}

// What the text extraction does with the Parser's open and close events.
function opened(number: i32): void {
  const flags = flagsOf(number);
  if ((flags & TITLE) != 0 && hidden == 0 && !titleDone) {
    inTitle = true;
    restartTitle();
  } else if ((flags & HIDDEN) != 0) hidden++;
  if ((flags & BLOCK) != 0) separate();
}

function closed(number: i32): void {
  const flags = flagsOf(number);
  if ((flags & TITLE) != 0 && inTitle) {
    inTitle = false;
    titleDone = true;
  } else if ((flags & HIDDEN) != 0 && hidden > 0) hidden--;
  if ((flags & BLOCK) != 0) separate();
}

function pop(): void {
  depth--;
  const number = load<i32>(stack + (<usize>depth << 2));
  if (contextOf(number) != -1) foreignDepth--;
  closed(number);
}

/** A start tag's name, adjusted: the implied closes, then the element on the stack. */
export function open(number: i32): void {
  tag = number;
  opening = false;
  const flags = flagsOf(number);
  if ((flags & FORM) != 0 && stackHas(number)) {
    tag = -1;
    return;
  }
  const closes = closesOf(number);
  if (closes != 0) while (depth > 0 && (closableOf(top()) & closes) != 0) pop();
  if ((flags & VOID) == 0) {
    if (depth == STACK_CAP) return fail();
    store<i32>(stack + (<usize>depth << 2), number);
    depth++;
    const context = contextOf(number);
    if (context != -1) {
      store<u8>(foreign + <usize>foreignDepth, <u8>context);
      foreignDepth++;
    }
  }
  opening = true;
}

/** The start tag ended with '>'. */
export function endOpen(): void {
  const number = tag;
  if (number < 0) return;
  if (opening) {
    opened(number);
    opening = false;
  }
  if ((flagsOf(number) & VOID) != 0) closed(number);
  tag = -1;
}

/** The start tag ended with '/>': closed at once in foreign content. */
export function selfClosing(): void {
  if (inForeign()) closeCurrent();
  else endOpen();
}

/** An end tag's name, adjusted. */
export function closeTag(number: i32): void {
  const flags = flagsOf(number);
  if ((flags & VOID) == 0) {
    let i = depth - 1;
    while (i >= 0 && load<i32>(stack + (<usize>i << 2)) != number) i--;
    if (i != -1) while (depth > i) pop();
    else if ((flags & P) != 0) {
      // </p> without a <p>: an empty paragraph
      open(number);
      closeCurrent();
    }
  } else if ((flags & BR) != 0) {
    // </br> is a <br>
    opened(number);
    closed(number);
  }
}

/** The start tag ends, and its element with it. */
function closeCurrent(): void {
  const number = tag;
  endOpen();
  if (number >= 0 && depth > 0 && top() == number) pop();
}

/** The page ended: every open element closes. */
export function endPage(): void {
  for (let i = depth - 1; i >= 0; i--) closed(load<i32>(stack + (<usize>i << 2)));
}

/** Page text [start, end), where it goes. */
export function pageText(start: i32, end: i32): void {
  if (start >= end) return;
  if (inTitle) copyToTitle(start, end);
  else if (hidden == 0) copyToText(start, end);
}

/** The page's last character as text (the Tokenizer's quirk where a page ends inside a tag). */
export function lastChar(): void {
  let start = n - 1;
  while (start > 0 && (at(start) & 0xc0) == 0x80) start--;
  // Outside the BMP, the decoded page keeps half a surrogate pair, which bytes cannot say.
  if (at(start) >= 0xf0) return fail();
  pageText(start, n);
}

// Entities in text: the common ones decoded here, the rest by the JS side's decoder (the
// `entities` package's, as the Tokenizer uses): entity(amp, limit) gives the characters it takes
// ('&' included; 0: none, the '&' is text) and leaves its text's UTF-8 bytes in entityBytes.
@external('env', 'entity')
declare function jsEntity(amp: i32, limit: i32): i32;
const entityBytes: usize = memory.data(64, 16);
let entityLength: u32 = 0;

export function entityBuffer(): usize {
  return entityBytes;
}
export function setEntityLength(length: u32): void {
  entityLength = length;
}

/** Text [start, end) holding an '&': its entities decoded. */
export function textWithEntities(start: i32, end: i32): void {
  if (!inTitle && hidden != 0) return;
  // The decoder reads to the character after the text ('<', where every entity has ended) or the page's end.
  const limit = min<i32>(n, end + 1);
  let from = start;
  let i = start;
  while (i < end) {
    if (at(i) != 0x26) {
      i++;
      continue;
    }
    const taken = i + 1 >= limit ? 0 : commonEntity(i, limit);
    const t = taken >= 0 ? taken : jsEntity(i, limit);
    if (t > 0) {
      pageText(from, i);
      bytesToText(entityBytes, entityLength, inTitle);
      from = i += t;
    } else i++;
  }
  pageText(from, end);
}

/**
 * The characters taken by an entity at `amp` the decoder would read as this does (a number, or
 * one of a few names, ended by ';'), its bytes in entityBytes; -1 for any other.
 */
function commonEntity(amp: i32, limit: i32): i32 {
  let i = amp + 1;
  if (at(i) == 0x23) {
    // &#ddd; or &#xhh;
    i++;
    let hex = false;
    if (i < limit && (at(i) | 0x20) == 0x78) {
      hex = true;
      i++;
    }
    const digits = i;
    let cp: u32 = 0;
    for (; i < limit && i - digits < 6; i++) {
      const c = at(i);
      if (c - 0x30 <= 9) cp = cp * (hex ? 16 : 10) + (c - 0x30);
      else if (hex && (c | 0x20) - 0x61 <= 5) cp = cp * 16 + ((c | 0x20) - 0x61 + 10);
      else break;
    }
    if (i == digits || i >= limit || at(i) != 0x3b) return -1;
    // Code points the decoder keeps as they are (no NUL, C1 control, surrogate or beyond Unicode).
    if (cp == 0 || (cp >= 0x80 && cp < 0xa0) || (cp >= 0xd800 && cp < 0xe000) || cp > 0x10ffff) return -1;
    entityLength = utf8(cp);
    return i + 1 - amp;
  }
  // A name of 2 to 5 letters and its ';'.
  let end = i;
  while (end < limit && end - i < 6 && (at(end) | 0x20) - 0x61 <= 25) end++;
  if (end >= limit || at(end) != 0x3b) return -1;
  const len = end - i;
  let cp: u32 = 0;
  const c0 = at(i);
  if (len == 2 && at(i + 1) == 0x74) cp = c0 == 0x6c ? 0x3c : c0 == 0x67 ? 0x3e : 0; // lt gt
  else if (len == 3 && c0 == 0x61 && at(i + 1) == 0x6d && at(i + 2) == 0x70) cp = 0x26; // amp
  else if (len == 4) {
    const w = load<u32>(inPtr + <usize>i);
    if (w == 0x746f7571) cp = 0x22; // quot
    else if (w == 0x736f7061) cp = 0x27; // apos
    else if (w == 0x7073626e) cp = 0xa0; // nbsp
    else if (w == 0x79706f63) cp = 0xa9; // copy
  } else if (len == 5) {
    const w = load<u32>(inPtr + <usize>i);
    const last = at(i + 4);
    if (w == 0x7361646e && last == 0x68) cp = 0x2013; // ndash
    else if (w == 0x7361646d && last == 0x68) cp = 0x2014; // mdash
  }
  if (cp == 0) return -1;
  entityLength = utf8(cp);
  return len + 2;
}

/** `cp`'s UTF-8 bytes to entityBytes; their count. */
function utf8(cp: u32): u32 {
  const p = entityBytes;
  if (cp < 0x80) {
    store<u8>(p, <u8>cp);
    return 1;
  }
  if (cp < 0x800) {
    store<u8>(p, <u8>(0xc0 | (cp >> 6)));
    store<u8>(p, <u8>(0x80 | (cp & 0x3f)), 1);
    return 2;
  }
  if (cp < 0x10000) {
    store<u8>(p, <u8>(0xe0 | (cp >> 12)));
    store<u8>(p, <u8>(0x80 | ((cp >> 6) & 0x3f)), 1);
    store<u8>(p, <u8>(0x80 | (cp & 0x3f)), 2);
    return 3;
  }
  store<u8>(p, <u8>(0xf0 | (cp >> 18)));
  store<u8>(p, <u8>(0x80 | ((cp >> 12) & 0x3f)), 1);
  store<u8>(p, <u8>(0x80 | ((cp >> 6) & 0x3f)), 2);
  store<u8>(p, <u8>(0x80 | (cp & 0x3f)), 3);
  return 4;
}
