// AssemblyScript, compiled to ascii-scan.wasm by `npm run build` (asc; not part of tsc's build).
//
// The parse hot path for pure-ASCII text, as indexer/ascii-terms.ts's scanAscii but over bytes
// in linear memory: finds the tokenizer's ASCII tokens ([a-z0-9]+ runs joined across a single
// apostrophe, lowercased, apostrophes dropped, at most maxLen long) and looks each one up in an
// open-addressing table of raw token -> value (a TermId, or -1 for a stopword). Inverting the
// synthetic crawl on the H100 machine: 12.2 ns/char with the JS scan, 4.0 with this: separators
// found eight bytes at a time, tokens found and hashed a 64-bit word at a time, keys compared
// as words.
//
// A raw token not in the table is added with a pending value (PENDING | its miss index) and
// listed as a miss; the JS side (indexer/wasm-ascii-table.ts) analyses each miss, sets its value
// and replaces the pending values in the outputs. So nothing is analysed inside a scan, and the
// caller decides the text is pure ASCII before any token is numbered. A parse worker's table
// numbers new raw tokens itself instead (setNextId: its stopwords are put in first), and the JS
// side only takes their keys.
//
// Memory (one linear memory, bump-allocated, never freed except by init()):
//   LUT (256 B) | input chunk (CHUNK + 16 B) | outputs (i32 per token) | misses (u32 slot per
//   new token) | table region: slots (16 B each: hash, key length, key offset, value), then
//   the key pool (the keys' bytes, 8 B per slot to start with).
// The table region is the last thing allocated: growing it allocates the doubled region above,
// rehashes into it and moves it down over the old one.

/** Largest text scanned in one call (the JS side cuts longer texts between tokens). */
export const CHUNK: u32 = 256 * 1024;
/** A value not known yet: PENDING | miss index. */
const PENDING: u32 = 0x80000000;
const STOPWORD: i32 = -1;
const POOL_BYTES_PER_SLOT: u32 = 8;
/** Bytes read past a key or the input's end by 64-bit loads. */
const PAD: u32 = 16;

import { copyUnescaped, jsonObjectSpans } from './json-line';
import { porterStemBytes } from './porter';

/** Longest JSONL line the fast path takes (json-line.ts); longer lines go the ordinary way. */
export const LINE_CAP: u32 = CHUNK;
/** Room for the configured JSON keys (per key: u32 length, bytes padded to 4). */
export const KEY_BYTES: u32 = 1024;
export const MAX_KEYS: u32 = 32;
/** Room for a token to stem: tokens longer than 255 are never stemmed. */
const STEM_BYTES: u32 = 512;
const MAX_STEMMED: u32 = 255;

let lut: usize = 0;
let inPtr: usize = 0;
let linePtr: usize = 0;
let keysPtr: usize = 0;
let spansPtr: usize = 0;
let stackPtr: usize = 0;
let stemPtr: usize = 0;
let stemScratch: usize = 0;
let outPtr: usize = 0;
let missPtr: usize = 0;
let missCount: u32 = 0;
let regionPtr: usize = 0;
let slotsPtr: usize = 0;
let mask: u32 = 0;
let size: u32 = 0;
let poolPtr: usize = 0;
let poolCap: u32 = 0;
let poolUsed: u32 = 0;
let top: usize = 0;
/**
 * The value a new raw token gets: -1, PENDING | its miss index (the JS side analyses it and sets
 * the value); from 0 on (setNextId), that number, counting up (the scanner numbers new raw
 * tokens itself: a parse worker's local ids, with the stopwords already in the table).
 */
let nextId: i32 = -1;
/** Where in the key pool the last scan's new keys start (one after another, in miss order). */
let missKeys: u32 = 0;
/** The highest `top` so far: memory below it has been touched (resident); above, only reserved. */
let highTop: usize = 0;
/** Where the table region starts (after the fixed buffers). */
let tableStart: usize = 0;

function ensureMemory(end: usize): void {
  const have = (<usize>memory.size()) << 16;
  if (end <= have) return;
  const need = <i32>((end - have + 0xffff) >> 16);
  // Grow by at least half again, so a growing table does not grow memory page by page.
  if (memory.grow(max(need, memory.size() >> 1)) < 0 && memory.grow(need) < 0) unreachable();
}

function alloc(bytes: usize): usize {
  const p = (top + 15) & ~(<usize>15);
  ensureMemory(p + bytes);
  top = p + bytes;
  if (top > highTop) highTop = top;
  return p;
}

/** (Re)starts with an empty table of `slots` slots (a power of two); earlier memory is reused. */
export function init(slots: u32): void {
  lut = (__heap_base + 15) & ~(<usize>15);
  top = lut;
  lut = alloc(256);
  for (let c: u32 = 0; c < 256; c++) {
    let v: u32 = 0;
    if ((c >= 97 && c <= 122) || (c >= 48 && c <= 57)) v = c;
    else if (c >= 65 && c <= 90) v = c | 32;
    store<u8>(lut + c, <u8>v);
  }
  inPtr = alloc(CHUNK + PAD);
  // At most one token per two bytes (a token and a separator), plus one.
  outPtr = alloc(((CHUNK >> 1) + 1) << 2);
  missPtr = alloc(((CHUNK >> 1) + 1) << 2);
  linePtr = alloc(LINE_CAP + PAD);
  keysPtr = alloc(KEY_BYTES);
  spansPtr = alloc(MAX_KEYS * 12);
  stackPtr = alloc(64);
  stemPtr = alloc(STEM_BYTES);
  stemScratch = alloc(STEM_BYTES);
  missCount = 0;
  nextId = -1;
  tableStart = top;
  newRegion(slots);
  size = 0;
  poolUsed = 0;
}

function newRegion(slots: u32): void {
  poolCap = slots * POOL_BYTES_PER_SLOT;
  const bytes = (<usize>slots << 4) + poolCap + PAD;
  regionPtr = alloc(bytes);
  slotsPtr = regionPtr;
  memory.fill(slotsPtr, 0, <usize>slots << 4);
  poolPtr = slotsPtr + (<usize>slots << 4);
  mask = slots - 1;
}

/** Doubles the table (and its pool, or more if `poolNeed` bytes do not fit). */
function growTable(poolNeed: u32): void {
  const oldRegion = regionPtr;
  const oldSlots = slotsPtr;
  const oldCount = mask + 1;
  const oldPool = poolPtr;
  let slots = oldCount << 1;
  while (slots * POOL_BYTES_PER_SLOT < poolNeed + PAD) slots <<= 1;
  newRegion(slots);
  for (let s: u32 = 0; s < oldCount; s++) {
    const b = oldSlots + (<usize>s << 4);
    if (load<u32>(b, 4) == 0) continue;
    let t = load<u32>(b) & mask;
    while (load<u32>(slotsPtr + (<usize>t << 4), 4) != 0) t = (t + 1) & mask;
    memory.copy(slotsPtr + (<usize>t << 4), b, 16);
    // A pending entry's miss record names its slot: follow the move.
    const v = load<u32>(b, 12);
    if (v != <u32>STOPWORD && (v & PENDING) != 0) store<u32>(missPtr + (<usize>(v & ~PENDING) << 2), t);
  }
  memory.copy(poolPtr, oldPool, poolUsed);
  // Move the new region down over the old one (memory.copy handles the overlap).
  const bytes = top - regionPtr;
  memory.copy(oldRegion, regionPtr, bytes);
  const shift = regionPtr - oldRegion;
  regionPtr = oldRegion;
  slotsPtr -= shift;
  poolPtr -= shift;
  top = regionPtr + bytes;
}

@inline function lowBytes(w: u64, n: u32): u64 {
  return n >= 8 ? w : w & ((<u64>1 << (<u64>n << 3)) - 1);
}

@inline function zeroBytes(v: u64): u64 {
  return (v - 0x0101010101010101) & ~v & 0x8080808080808080;
}

/** 0x80 in each byte of x (all bytes < 0x80) that lies in [lo, hi]. */
@inline function between(x: u64, lo: u64, hi: u64): u64 {
  return (x + (0x80 - lo) * 0x0101010101010101) & ~(x + (0x7f - hi) * 0x0101010101010101) & 0x8080808080808080;
}

/** Pass 1 for the byte at r, written at w: returns the next w (a joining apostrophe is dropped). */
@inline function copyByte(r: usize, w: usize, end: usize): usize {
  const c = load<u8>(r);
  const v = load<u8>(lut + c);
  if (v == 0 && c == 39 && w > inPtr && load<u8>(w - 1) != 0 && r + 1 < end && load<u8>(lut + load<u8>(r + 1)) != 0) return w;
  store<u8>(w, v);
  return w + 1;
}

/**
 * Scans the n bytes written at input(): returns the number of values written at outputs()
 * (stopwords left out; a new raw token's value is PENDING | its index among the misses()).
 */
export function scan(n: u32, maxLen: u32): u32 {
  // Pass 1, in place: lowercase word characters, every other byte to 0, joining apostrophes
  // (between two word characters) dropped. Tokens are then the runs of non-zero bytes.
  const end = inPtr + n;
  let w = inPtr;
  let r = inPtr;
  // Eight bytes at a time while no apostrophe is in them (SWAR range tests, bytes < 0x80).
  while (r + 8 <= end) {
    const x = load<u64>(r);
    if (zeroBytes(x ^ 0x2727272727272727) != 0) {
      for (const e = r + 8; r < e; r++) w = copyByte(r, w, end);
      continue;
    }
    const upper = between(x, 65, 90);
    const word = upper | between(x, 97, 122) | between(x, 48, 57);
    store<u64>(w, (x | (upper >> 2)) & ((word >> 7) * 0xff));
    r += 8;
    w += 8;
  }
  for (; r < end; r++) w = copyByte(r, w, end);
  store<u64>(w, 0);
  store<u64>(w, 0, 8);
  const stop = w;
  let out = outPtr;
  missCount = 0;
  missKeys = poolUsed;
  let p = inPtr;
  for (;;) {
    // The next token's start: the first non-zero byte (the input is zero-padded).
    const gap = load<u64>(p);
    if (gap == 0) {
      if (p >= stop) break;
      p += 8;
      continue;
    }
    p += <usize>(ctz(gap) >> 3);
    if (p >= stop) break;
    const start = p;
    // The token's end, eight bytes at a time (the input is zero-padded).
    let len: u32;
    const first = load<u64>(p);
    const z = zeroBytes(first);
    if (z != 0) {
      len = <u32>(ctz(z) >> 3);
    } else {
      len = 8;
      for (;;) {
        const z2 = zeroBytes(load<u64>(start + len));
        if (z2 != 0) {
          len += <u32>(ctz(z2) >> 3);
          break;
        }
        len += 8;
      }
    }
    p = start + len;
    if (len > maxLen) continue;
    const head = lowBytes(first, len);
    let h: u32;
    if (len <= 8) {
      const x = (head ^ (<u64>len << 56)) * 0x9e3779b97f4a7c15;
      h = <u32>(x >> 32) ^ <u32>x;
    } else {
      let x: u64 = <u64>len;
      let q: u32 = 0;
      for (; q + 8 <= len; q += 8) x = (x ^ load<u64>(start + q)) * 0x9e3779b97f4a7c15 + 0x632be59bd9b4e019;
      if (q < len) x = (x ^ lowBytes(load<u64>(start + q), len - q)) * 0x9e3779b97f4a7c15;
      h = <u32>(x >> 32) ^ <u32>x;
    }
    let t = h & mask;
    let value: i32 = 0;
    for (;;) {
      const b = slotsPtr + (<usize>t << 4);
      const keyLength = load<u32>(b, 4);
      if (keyLength == 0) {
        value = addPending(t, h, start, len);
        break;
      }
      if (load<u32>(b) == h && keyLength == len) {
        const key = poolPtr + load<u32>(b, 8);
        if (len <= 8 ? lowBytes(load<u64>(key), len) == head : memory.compare(key, start, len) == 0) {
          value = load<i32>(b, 12);
          break;
        }
      }
      t = (t + 1) & mask;
    }
    // Branch-free (stopwords are common and unpredictable): a stopword is written and then
    // overwritten by the next value.
    store<i32>(out, value);
    out += select<usize>(0, 4, value == STOPWORD);
  }
  return <u32>((out - outPtr) >> 2);
}

/** Adds the token at start (len bytes, hash h, free slot t) with a pending value. */
function addPending(t: u32, h: u32, start: usize, len: u32): i32 {
  if ((size + 1) << 1 > mask + 1 || poolUsed + len + PAD > poolCap) {
    growTable(poolUsed + len);
    t = h & mask;
    while (load<u32>(slotsPtr + (<usize>t << 4), 4) != 0) t = (t + 1) & mask;
  }
  memory.copy(poolPtr + poolUsed, start, len);
  const b = slotsPtr + (<usize>t << 4);
  const numbered = nextId >= 0;
  const value = numbered ? nextId++ : <i32>(PENDING | missCount);
  store<u32>(b, h);
  store<u32>(b, len, 4);
  store<u32>(b, poolUsed, 8);
  store<i32>(b, value, 12);
  // A numbered token's record is its key's length (its key follows the previous one in the
  // pool: see missKeyStart); a pending one's is its slot, for setValue.
  store<u32>(missPtr + (<usize>missCount << 2), numbered ? len : t);
  missCount++;
  poolUsed += len;
  size++;
  return value;
}

/**
 * From now on, a new raw token's value is `id`, then `id` + 1, ... (no pending values: the JS
 * side only takes the new tokens' keys); -1 goes back to pending values.
 */
export function setNextId(id: i32): void {
  nextId = id;
}

/** Sets the value of the table entry in `slot` (a miss's slot). */
export function setValue(slot: u32, value: i32): void {
  store<i32>(slotsPtr + (<usize>slot << 4), value, 12);
}

/**
 * The JSONL fast path: validates the n bytes written at lineInput() as a JSON object and writes
 * the spans of the keyCount keys written at keyInput() at spans() (json-line.ts). OK (0) or
 * FALLBACK (1).
 */
export function jsonLine(n: u32, keyCount: u32): u32 {
  memory.fill(linePtr + n, 0, PAD);
  return jsonObjectSpans(linePtr, n, keysPtr, keyCount, spansPtr, stackPtr);
}

/** Scans the string content lineInput()[start, end) as scan() does (escapes, never \u, as spaces). */
export function scanSpan(start: u32, end: u32, escaped: bool, maxLen: u32): u32 {
  if (escaped) copyUnescaped(linePtr, start, end, inPtr);
  else memory.copy(inPtr, linePtr + start, end - start);
  return scan(end - start, maxLen);
}

/**
 * The term of the token written at stemInput() (n bytes): -1 if a byte is not [a-z0-9] (the
 * caller analyses it the JS way); else, stemmed in place unless it has no letter or is longer
 * than 255 (kept as scanned, as the tokenizer does), its length.
 */
export function stem(n: u32): i32 {
  let letter = false;
  for (let i: u32 = 0; i < n; i++) {
    const c = <u32>load<u8>(stemPtr + i);
    if (c - 97 < 26) letter = true;
    else if (c - 48 >= 10) return -1;
  }
  if (!letter || n > MAX_STEMMED) return <i32>n;
  return porterStemBytes(stemPtr, <i32>n, stemScratch);
}

export function stemInput(): usize {
  return stemPtr;
}

export function lineInput(): usize {
  return linePtr;
}
export function keyInput(): usize {
  return keysPtr;
}
export function spans(): usize {
  return spansPtr;
}
export function input(): usize {
  return inPtr;
}
export function outputs(): usize {
  return outPtr;
}
export function misses(): usize {
  return missPtr;
}
export function missTotal(): u32 {
  return missCount;
}
export function missKeyStart(): u32 {
  return missKeys;
}
export function slots(): usize {
  return slotsPtr;
}
export function pool(): usize {
  return poolPtr;
}
export function tableSize(): u32 {
  return size;
}
/** Bytes of the table region ever allocated (its slots, key pool and the room it grew through). */
export function tableBytes(): usize {
  return highTop - tableStart;
}
