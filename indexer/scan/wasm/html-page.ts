// AssemblyScript, part of html-tokens.wasm: the page being read and the text it gives. The page's
// bytes lie at inPtr (n of them, then padding for 16-byte loads); the visible text and the title
// are written after them, each with room for as many bytes as the page holds. Every byte written
// stands for at least one byte read (a separator for a tag, an entity's text for the entity),
// but for a few named entities whose text is longer than their name (&nGt;): a write past the
// room fails the page (it then goes the JS way) instead of writing on. The memory never shrinks,
// so it grows by a quarter at least, not by doubling: about three times the largest page.

const PAD: u32 = 16;

export let inPtr: usize = 0;
export let n: i32 = 0;
let inCap: u32 = 0;
export let outPtr: usize = 0;
export let outLength: u32 = 0;
export let titlePtr: usize = 0;
export let titleLength: u32 = 0;
let outCap: u32 = 0;
/** The page cannot be read here: it goes the JS way. */
export let failed = false;

/** Makes room for a page of `length` bytes; returns where to copy it. */
export function input(length: u32): usize {
  if (inPtr === 0 || length + PAD > inCap) {
    const cap = (max<u32>(length + PAD, max<u32>(inCap + (inCap >> 2), 1 << 16)) + 15) & ~15;
    const room = cap + 64;
    inPtr = (__heap_base + 15) & ~(<usize>15);
    const bytes = inPtr + <usize>cap + 2 * <usize>room;
    const have = <usize>memory.size() << 16;
    if (bytes > have) memory.grow(<i32>((bytes - have + 0xffff) >> 16));
    inCap = cap;
    outCap = room;
    outPtr = inPtr + <usize>cap;
    titlePtr = outPtr + <usize>room;
  }
  return inPtr;
}

/** Starts a page of `length` bytes (at inPtr). */
export function startPage(length: i32): void {
  n = length;
  outLength = 0;
  titleLength = 0;
  failed = false;
}

export function fail(): void {
  failed = true;
}

@inline export function at(i: i32): u32 {
  return <u32>load<u8>(inPtr + <usize>i);
}

/** Page bytes [start, end) to the text. */
export function copyToText(start: i32, end: i32): void {
  const length = <u32>(end - start);
  if (outLength + length > outCap) return fail();
  memory.copy(outPtr + <usize>outLength, inPtr + <usize>start, length);
  outLength += length;
}

/** Page bytes [start, end) to the title. */
export function copyToTitle(start: i32, end: i32): void {
  const length = <u32>(end - start);
  if (titleLength + length > outCap) return fail();
  memory.copy(titlePtr + <usize>titleLength, inPtr + <usize>start, length);
  titleLength += length;
}

/** Bytes at `from` (outside the page) to the text, or to the title. */
export function bytesToText(from: usize, length: u32, toTitle: bool): void {
  if (toTitle) {
    if (titleLength + length > outCap) return fail();
    memory.copy(titlePtr + <usize>titleLength, from, length);
    titleLength += length;
  } else {
    if (outLength + length > outCap) return fail();
    memory.copy(outPtr + <usize>outLength, from, length);
    outLength += length;
  }
}

/** A space in the text: a block element's edge. */
export function separate(): void {
  if (outLength >= outCap) return fail();
  store<u8>(outPtr + <usize>outLength, 0x20);
  outLength++;
}

/** The title starts again (a later <title> opened before the first was closed). */
export function restartTitle(): void {
  titleLength = 0;
}
