// AssemblyScript, compiled into ascii-scan.wasm (imported by ascii-scan.ts).
//
// The JSONL fast path's first half: validates one line as JSON exactly as JSON.parse would
// accept it, requires a top-level object, and records where the values of the configured keys
// are (the last occurrence wins, as in JSON.parse). Anything this cannot vouch for (a key with
// an escape, nesting deeper than MAX_DEPTH, any syntax error) answers FALLBACK: the caller
// then takes the line the ordinary way (JSON.parse), which also words the error. So a line is
// either refused here or read exactly as JSON.parse reads it.
//
// Spans (three u32 per key): kind, start, end (byte offsets in the line; a string's span is
// its content between the quotes).

export const OK: u32 = 0;
export const FALLBACK: u32 = 1;

export const KIND_ABSENT: u32 = 0;
/** A string of ASCII bytes without escapes. */
export const KIND_PLAIN: u32 = 1;
/**
 * A string of ASCII bytes with two-byte escapes (\" \\ \/ \b \f \n \r \t), none \u, and/or
 * U+FFFD as its three UTF-8 bytes (EF BF BD), its only non-ASCII character.
 */
export const KIND_ESCAPED: u32 = 2;
/** A string with a \u escape or a byte >= 0x80: decoded by the caller. */
export const KIND_DECODE: u32 = 3;
export const KIND_NUMBER: u32 = 4;
/** true, false or null. */
export const KIND_LITERAL: u32 = 5;
export const KIND_ARRAY: u32 = 6;
export const KIND_OBJECT: u32 = 7;

const MAX_DEPTH: u32 = 64;
const FAIL: i32 = -1;

@inline function isWs(c: u32): bool {
  return c == 0x20 || c == 0x0a || c == 0x0d || c == 0x09;
}

@inline function ws(line: usize, p: i32): i32 {
  while (isWs(load<u8>(line + p))) p++;
  return p;
}

@inline function isDigit(c: u32): bool {
  return c - 48 < 10;
}

@inline function isHex(c: u32): bool {
  return c - 48 < 10 || (c | 32) - 97 < 6;
}

/** Bytes of x with a 0x80 set where the byte is < 0x20 (valid for bytes < 0x80). */
@inline function controlBytes(x: u64): u64 {
  return (x - 0x2020202020202020) & ~x & 0x8080808080808080;
}

@inline function zeroBytes(v: u64): u64 {
  return (v - 0x0101010101010101) & ~v & 0x8080808080808080;
}

/** Kind of the last string read by skipString (KIND_PLAIN, KIND_ESCAPED or KIND_DECODE). */
let stringKind: u32 = 0;

/**
 * The string starting with the quote at p: returns the offset after its closing quote, or
 * FAIL. Sets stringKind. The line ends with a NUL (never valid in a string), so no bound check.
 */
function skipString(line: usize, p: i32): i32 {
  p++;
  let kind = KIND_PLAIN;
  for (;;) {
    // Eight bytes at a time while none is a quote, a backslash, a control byte or >= 0x80.
    const x = load<u64>(line + p);
    const special = (x & 0x8080808080808080) | zeroBytes(x ^ 0x2222222222222222) | zeroBytes(x ^ 0x5c5c5c5c5c5c5c5c) | controlBytes(x);
    if (special == 0) {
      p += 8;
      continue;
    }
    // Straight to the first such byte: the lowest flag is exact (a false one can only sit above
    // a true one, where a borrow carried). Mail's text has an escaped newline every line or so.
    p += <i32>(ctz(special) >> 3);
    const c = <u32>load<u8>(line + p);
    if (c == 0x22) break;
    if (c == 0x5c) {
      const e = <u32>load<u8>(line + p + 1);
      if (e == 0x75) {
        for (let k = 2; k < 6; k++) if (!isHex(load<u8>(line + p + k))) return FAIL;
        kind = KIND_DECODE;
        p += 6;
        continue;
      }
      if (e != 0x22 && e != 0x5c && e != 0x2f && e != 0x62 && e != 0x66 && e != 0x6e && e != 0x72 && e != 0x74) return FAIL;
      if (kind == KIND_PLAIN) kind = KIND_ESCAPED;
      p += 2;
      continue;
    }
    if (c < 0x20) return FAIL;
    if (c >= 0x80) {
      // U+FFFD alone (damaged mail: 452 of the mail corpus's 510 non-ASCII messages have no
      // other non-ASCII character) separates tokens like a space, in NFKC and lowercased text
      // too: copyUnescaped writes it as spaces, so such a string stays on the fast path.
      if (c == 0xef && load<u8>(line + p + 1) == 0xbf && load<u8>(line + p + 2) == 0xbd) {
        if (kind == KIND_PLAIN) kind = KIND_ESCAPED;
        p += 3;
        continue;
      }
      kind = KIND_DECODE;
    }
    p++;
  }
  stringKind = kind;
  return p + 1;
}

/** The number starting at p (JSON's grammar): the offset after it, or FAIL. */
function skipNumber(line: usize, p: i32): i32 {
  if (load<u8>(line + p) == 0x2d) p++;
  const c = <u32>load<u8>(line + p);
  if (c == 0x30) p++;
  else if (c - 49 < 9) {
    while (isDigit(load<u8>(line + p))) p++;
  } else return FAIL;
  if (load<u8>(line + p) == 0x2e) {
    p++;
    if (!isDigit(load<u8>(line + p))) return FAIL;
    while (isDigit(load<u8>(line + p))) p++;
  }
  if ((<u32>load<u8>(line + p) | 32) == 0x65) {
    p++;
    const s = <u32>load<u8>(line + p);
    if (s == 0x2b || s == 0x2d) p++;
    if (!isDigit(load<u8>(line + p))) return FAIL;
    while (isDigit(load<u8>(line + p))) p++;
  }
  return p;
}

/** true / false / null at p: the offset after it, or FAIL. */
function skipLiteral(line: usize, p: i32): i32 {
  const c = <u32>load<u8>(line + p);
  // The line is padded, so reading four or five bytes past a short end is safe.
  const w = load<u32>(line + p);
  if (c == 0x74 && w == 0x65757274) return p + 4; // "true"
  if (c == 0x6e && w == 0x6c6c756e) return p + 4; // "null"
  if (c == 0x66 && w == 0x736c6166 && load<u8>(line + p + 4) == 0x65) return p + 5; // "false"
  return FAIL;
}

/** Kind of the last value read by skipValue. */
let valueKind: u32 = 0;

/**
 * The value starting at p (after whitespace): the offset after it, or FAIL. Containers are
 * walked with an explicit stack (stack: MAX_DEPTH bytes of scratch).
 */
function skipValue(line: usize, p: i32, stack: usize): i32 {
  let depth: u32 = 0;
  let first = true;
  for (;;) {
    // A value at p.
    const c = <u32>load<u8>(line + p);
    let after: i32;
    if (c == 0x22) {
      after = skipString(line, p);
      if (first) valueKind = stringKind;
    } else if (c == 0x2d || isDigit(c)) {
      after = skipNumber(line, p);
      if (first) valueKind = KIND_NUMBER;
    } else if (c == 0x74 || c == 0x66 || c == 0x6e) {
      after = skipLiteral(line, p);
      if (first) valueKind = KIND_LITERAL;
    } else if (c == 0x7b || c == 0x5b) {
      if (first) valueKind = c == 0x7b ? KIND_OBJECT : KIND_ARRAY;
      first = false;
      p = ws(line, p + 1);
      const close: u32 = c == 0x7b ? 0x7d : 0x5d;
      if (<u32>load<u8>(line + p) == close) {
        after = p + 1;
      } else {
        if (depth == MAX_DEPTH) return FAIL;
        store<u8>(stack + depth, <u8>c);
        depth++;
        if (c == 0x7b) {
          p = member(line, p);
          if (p < 0) return FAIL;
        }
        continue;
      }
    } else return FAIL;
    first = false;
    if (after < 0) return FAIL;
    p = after;
    // After a value: close containers, or go on to the next element or member.
    for (;;) {
      if (depth == 0) return p;
      p = ws(line, p);
      const top = <u32>load<u8>(stack + depth - 1);
      const d = <u32>load<u8>(line + p);
      if (d == 0x2c) {
        p = ws(line, p + 1);
        if (top == 0x7b) {
          p = member(line, p);
          if (p < 0) return FAIL;
        }
        break;
      }
      if ((top == 0x7b && d == 0x7d) || (top == 0x5b && d == 0x5d)) {
        p++;
        depth--;
        continue;
      }
      return FAIL;
    }
  }
  return FAIL; // unreachable: the loop returns
}

/** A member's key and colon at p: the offset of its value (after whitespace), or FAIL. */
function member(line: usize, p: i32): i32 {
  if (load<u8>(line + p) != 0x22) return FAIL;
  p = skipString(line, p);
  if (p < 0) return FAIL;
  p = ws(line, p);
  if (load<u8>(line + p) != 0x3a) return FAIL;
  return ws(line, p + 1);
}

/**
 * Validates the n bytes at `line` (followed by at least 8 NUL bytes) as one JSON object and
 * writes the spans of the `keyCount` keys (at `keys`: per key, a u32 length then its bytes,
 * padded to 4) at `spans`. Returns OK or FALLBACK.
 */
export function jsonObjectSpans(line: usize, n: u32, keys: usize, keyCount: u32, spans: usize, stack: usize): u32 {
  memory.fill(spans, 0, <usize>keyCount * 12);
  let p = ws(line, 0);
  if (load<u8>(line + p) != 0x7b) return FALLBACK;
  p = ws(line, p + 1);
  if (load<u8>(line + p) == 0x7d) p++;
  else p = members(line, p, keys, keyCount, spans, stack);
  if (p < 0) return FALLBACK;
  p = ws(line, p);
  return <u32>p == n ? OK : FALLBACK;
}

/**
 * The members of the top-level object from p (its first key) to its closing brace: the offset
 * after the brace, or FAIL. (A function of its own: asc 0.28 miscompiled a break out of this
 * loop in an else branch into a trap.)
 */
function members(line: usize, p: i32, keys: usize, keyCount: u32, spans: usize, stack: usize): i32 {
  for (;;) {
    if (load<u8>(line + p) != 0x22) return FAIL;
    const keyStart = p + 1;
    p = skipString(line, p);
    if (p < 0 || stringKind != KIND_PLAIN) return FAIL;
    const keyLen = <u32>(p - 1 - keyStart);
    p = ws(line, p);
    if (load<u8>(line + p) != 0x3a) return FAIL;
    p = ws(line, p + 1);
    const valueStart = p;
    p = skipValue(line, p, stack);
    if (p < 0) return FAIL;
    // Which configured key is this? (A handful of keys: a linear search.)
    let k: u32 = 0;
    let at = keys;
    for (; k < keyCount; k++) {
      const len = load<u32>(at);
      if (len == keyLen && memory.compare(at + 4, line + keyStart, len) == 0) break;
      at += 4 + ((len + 3) & ~3);
    }
    if (k < keyCount) {
      const s = spans + <usize>k * 12;
      const quoted = valueKind <= KIND_DECODE;
      store<u32>(s, valueKind);
      store<u32>(s, quoted ? valueStart + 1 : valueStart, 4);
      store<u32>(s, quoted ? p - 1 : p, 8);
    }
    p = ws(line, p);
    const c = load<u8>(line + p);
    if (c == 0x7d) return p + 1;
    if (c != 0x2c) return FAIL;
    p = ws(line, p + 1);
  }
  return FAIL; // unreachable: the loop returns
}

/**
 * Copies the string content line[start, end) of a KIND_ESCAPED string to `to`, each two-byte
 * escape (never \u here) written as two spaces and each U+FFFD as three: the same tokens as the
 * decoded text, whose escapes (quote, backslash, slash, control characters) and replacement
 * characters all separate tokens.
 */
export function copyUnescaped(line: usize, start: u32, end: u32, to: usize): void {
  const n = end - start;
  memory.copy(to, line + start, n);
  let i: u32 = 0;
  while (i < n) {
    if (i + 8 <= n) {
      const x = load<u64>(to + i);
      const special = zeroBytes(x ^ 0x5c5c5c5c5c5c5c5c) | (x & 0x8080808080808080);
      if (special == 0) {
        i += 8;
        continue;
      }
      // The lowest flag is exact (see skipString): a backslash or U+FFFD's first byte.
      i += <u32>(ctz(special) >> 3);
    } else {
      const c = <u32>load<u8>(to + i);
      if (c != 0x5c && c < 0x80) {
        i++;
        continue;
      }
    }
    if (<u32>load<u8>(to + i) == 0x5c) {
      store<u16>(to + i, 0x2020);
      i += 2;
    } else {
      store<u16>(to + i, 0x2020);
      store<u8>(to + i + 2, 0x20);
      i += 3;
    }
  }
}
