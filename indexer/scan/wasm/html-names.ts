// AssemblyScript, part of html-tokens.wasm: tag names numbered, and what the element rules say of
// each number. A lowercased ASCII name keeps its number in this instance; the rules of the names
// they speak of (indexer/corpus/html-elements.ts, the one home of those rules) are given by the JS
// side once, numbered first (defineTag), and kept when the numbers of other names are forgotten
// between pages (forgetNames), so that a crawl of made-up tag names cannot fill the table.
//
// The table: open addressing over NAME_SLOTS slots of (hash, number + 1, length, pool offset), the
// names' lowercased bytes in a pool. A number's rules: 16 bytes (flags, context + 1, SVG-adjusted
// number + 1, the bit it has in the sets of elements a start tag closes, the set its start tag closes).

import { at } from './html-page';

const NAME_SLOTS: u32 = 4096;
const NAME_POOL: u32 = 64 * 1024;
const MAX_NAME: i32 = 32;
/** Numbers of names in the table: below this. */
const MAX_NUMBERS: i32 = 2048;
/** Numbers of SVG's mixed-case names (foreignObject, clipPath...), which no page spells: from here. */
export const ADJUSTED_BASE: i32 = MAX_NUMBERS;
const RULE_COUNT: i32 = MAX_NUMBERS + 64;
/** The table is emptied of the pages' own names once they number this many. */
const FORGET_AT: i32 = MAX_NUMBERS / 2;

const table: usize = memory.data(<i32>NAME_SLOTS * 16, 16);
const pool: usize = memory.data(<i32>NAME_POOL, 16);
const rules: usize = memory.data(RULE_COUNT * 16, 16);
let names: i32 = 0;
let poolUsed: u32 = 0;
let knownNames: i32 = 0;
let knownPool: u32 = 0;

/** nameNumber's answers for a name it cannot number. */
export const NO_NUMBER: i32 = -1;
export const NOT_ASCII: i32 = -2;

/** Flags of a number's rules. */
export const HIDDEN: u32 = 1;
export const BLOCK: u32 = 2;
export const VOID: u32 = 4;
export const TITLE: u32 = 8;
export const FORM: u32 = 16;
export const P: u32 = 32;
export const BR: u32 = 64;
/** <image>, which is <img> outside foreign content. */
export const IMAGE: u32 = 128;

@inline export function flagsOf(number: i32): u32 {
  return <u32>load<u8>(rules + (<usize>number << 4));
}
/** The foreign context the element opens (SVG, MATHML, NONE for an integration point), or -1. */
@inline export function contextOf(number: i32): i32 {
  return <i32>load<u8>(rules + (<usize>number << 4), 1) - 1;
}
/** The number of the name's SVG spelling, or -1. */
@inline export function svgAdjustedOf(number: i32): i32 {
  return <i32>load<u16>(rules + (<usize>number << 4), 2) - 1;
}
@inline export function closableOf(number: i32): u32 {
  return load<u32>(rules + (<usize>number << 4), 4);
}
@inline export function closesOf(number: i32): u32 {
  return load<u32>(rules + (<usize>number << 4), 8);
}

/** The JS side's rules for a number (see the layout above). */
export function defineTag(number: i32, flags: u32, context: i32, svgAdjusted: i32, closable: u32, closes: u32): void {
  const p = rules + (<usize>number << 4);
  store<u8>(p, <u8>flags);
  store<u8>(p, <u8>(context + 1), 1);
  store<u16>(p, <u16>(svgAdjusted + 1), 2);
  store<u32>(p, closable, 4);
  store<u32>(p, closes, 8);
}

/** The number of the name in the page's first `length` bytes (the JS side's names, before any page). */
export function numberOf(length: i32): i32 {
  const number = nameNumber(0, length);
  knownNames = names;
  knownPool = poolUsed;
  return number;
}

/** Forgets the numbers of names the JS side did not define, once there are many (between pages). */
export function forgetNames(): void {
  if (names < FORGET_AT) return;
  for (let slot: u32 = 0; slot < NAME_SLOTS; slot++) {
    const p = table + <usize>slot * 16;
    // Every defined name was put in before any other, so no probe of one crosses a slot cleared here.
    if (load<i32>(p, 4) > knownNames) store<i32>(p, 0, 4);
  }
  names = knownNames;
  poolUsed = knownPool;
}

/** The number of the tag name [start, end), lowercased; NOT_ASCII, or NO_NUMBER for a long name or none left. */
export function nameNumber(start: i32, end: i32): i32 {
  const len = end - start;
  let h: u32 = <u32>len;
  for (let i = start; i < end; i++) {
    let c = at(i);
    if (c >= 0x80) return NOT_ASCII;
    if (c - 0x41 <= 25) c |= 0x20;
    h = (h ^ c) * 0x01000193;
  }
  if (len > MAX_NAME) return NO_NUMBER;
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
  if (names >= MAX_NUMBERS || poolUsed + <u32>len > NAME_POOL) return NO_NUMBER;
  const p = table + <usize>slot * 16;
  store<u32>(p, h);
  store<i32>(p, names + 1, 4);
  store<i32>(p, len, 8);
  store<u32>(p, poolUsed, 12);
  for (let k = 0; k < len; k++) {
    let c = at(start + k);
    if (c - 0x41 <= 25) c |= 0x20;
    store<u8>(pool + <usize>poolUsed + <usize>k, <u8>c);
  }
  poolUsed += <u32>len;
  // A number used before forgetNames has no rules now.
  defineTag(names, 0, -1, -1, 0, 0);
  names++;
  return names - 1;
}
