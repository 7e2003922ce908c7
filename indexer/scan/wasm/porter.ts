// AssemblyScript, compiled into ascii-scan.wasm (imported by ascii-scan.ts).
//
// src/porter-stemmer.ts (natural's Porter stemmer, its quirks included) over the bytes of a
// lowercase ASCII token: what the parse workers stem their ASCII raw tokens with, so that
// stemming costs no JS compilation (TurboFan spent ~150 ms of CPU on the JS stemmer in a mail
// build). Line terminators cannot occur in such a token, so natural's `.+` tests reduce to a
// non-empty prefix. test/wasm-porter.test.ts compares it with the JS stemmer.
//
// The word is edited in place at `w` (room for one more byte than its length: at most one
// step adds a letter net); each step returns the new length.

@inline function at(w: usize, i: i32): u32 {
  return <u32>load<u8>(w + <usize>i);
}

@inline function isVowel(c: u32): bool {
  return c == 0x61 || c == 0x65 || c == 0x69 || c == 0x6f || c == 0x75;
}

@inline function isVowelOrY(c: u32): bool {
  return c == 0x79 || isVowel(c);
}

/** w[0, n) ends with `suffix` (ASCII). */
function endsWith(w: usize, n: i32, suffix: string): bool {
  const k = suffix.length;
  if (k > n) return false;
  for (let j = 0; j < k; j++) if (at(w, n - k + j) != <u32>suffix.charCodeAt(j)) return false;
  return true;
}

const SYM_NONE: i32 = 0;
const SYM_C: i32 = 1;
const SYM_V: i32 = 2;

/** natural's measure of w[0, end), doubled (see measure2 in src/porter-stemmer.ts). */
function measure2(w: usize, end: i32): i32 {
  if (end <= 0) return -2;
  let length = 0;
  let first = SYM_NONE;
  let last = SYM_NONE;
  let i = 0;
  while (i < end) {
    const c = at(w, i);
    let sym: i32;
    let then = SYM_NONE;
    if (isVowel(c)) {
      i++;
      while (i < end && isVowel(at(w, i))) i++;
      sym = SYM_V;
    } else if (c == 0x79) {
      i++;
      sym = SYM_C;
    } else {
      let j = i + 1;
      while (j < end && !isVowelOrY(at(w, j))) j++;
      sym = SYM_C;
      if (j < end && at(w, j) == 0x79) {
        then = SYM_V;
        i = j + 1;
      } else {
        i = j;
      }
    }
    if (!(sym == SYM_C && last == SYM_C)) {
      length++;
      if (first == SYM_NONE) first = sym;
      last = sym;
    }
    if (then != SYM_NONE) {
      length++;
      last = then;
    }
  }
  if (first == SYM_C) length--;
  if (last == SYM_V) length--;
  return length;
}

function hasVowelGroup(w: usize, end: i32): bool {
  for (let p = 0; p < end; p++) {
    const c = at(w, p);
    if (isVowel(c)) return true;
    if (c == 0x79 && p > 0 && !isVowelOrY(at(w, p - 1))) return true;
  }
  return false;
}

function isConsonantAt(w: usize, p: i32): bool {
  const c = at(w, p);
  if (isVowel(c)) return false;
  if (c == 0x79) return p == 0 || isVowelOrY(at(w, p - 1));
  return true;
}

function isCvcAt(w: usize, p: i32): bool {
  return isConsonantAt(w, p) && !isConsonantAt(w, p + 1) && isConsonantAt(w, p + 2);
}

function step1a(w: usize, n: i32): i32 {
  if (endsWith(w, n, 'sses') || endsWith(w, n, 'ies')) return n - 2;
  if (n > 2 && at(w, n - 1) == 0x73 && at(w, n - 2) != 0x73) return n - 1;
  return n;
}

function step1b(w: usize, n: i32): i32 {
  if (endsWith(w, n, 'eed')) return measure2(w, n - 3) > 0 ? n - 1 : n;
  let end: i32;
  if (endsWith(w, n, 'ed')) end = n - 2;
  else if (endsWith(w, n, 'ing')) end = n - 3;
  else return n;
  if (end == 0) return n;
  if (!hasVowelGroup(w, end)) return n;
  const last = at(w, end - 1);
  if (end >= 2) {
    const prev = at(w, end - 2);
    if ((prev == 0x61 && last == 0x74) || (prev == 0x62 && last == 0x6c) || (prev == 0x69 && last == 0x7a)) {
      store<u8>(w + <usize>end, 0x65);
      return end + 1;
    }
    if (prev == last && !isVowel(last) && last != 0x6c && last != 0x73 && last != 0x7a) return end - 1;
  }
  if (end >= 3 && last != 0x77 && last != 0x78 && last != 0x79 && isCvcAt(w, end - 3) && measure2(w, end) == 2) {
    store<u8>(w + <usize>end, 0x65);
    return end + 1;
  }
  return end;
}

function step1c(w: usize, n: i32): i32 {
  if (n > 0 && at(w, n - 1) == 0x79 && hasVowelGroup(w, n - 1)) store<u8>(w + <usize>(n - 1), 0x69);
  return n;
}

// Steps 2 and 3: natural's replacePatterns, quirks kept: every rule is tried in order; the
// measure is of the ORIGINAL word minus the rule's suffix, the replacement is made on the word as
// the earlier rules left it (if it still ends with the suffix), and never leaves it empty.
const STEP2_SUFFIXES: string[] = ['ational', 'tional', 'enci', 'anci', 'izer', 'abli', 'bli', 'alli', 'entli', 'eli', 'ousli', 'ization', 'ation', 'ator', 'alism', 'iveness', 'fulness', 'ousness', 'aliti', 'iviti', 'biliti', 'logi'];
const STEP2_REPLACEMENTS: string[] = ['ate', 'tion', 'ence', 'ance', 'ize', 'able', 'ble', 'al', 'ent', 'e', 'ous', 'ize', 'ate', 'ate', 'al', 'ive', 'ful', 'ous', 'al', 'ive', 'ble', 'log'];
const STEP3_SUFFIXES: string[] = ['icate', 'ative', 'alize', 'iciti', 'ical', 'ful', 'ness'];
const STEP3_REPLACEMENTS: string[] = ['ic', '', 'al', 'ic', 'ic', '', ''];

/**
 * The last letters of a list's suffixes, one bit each (a = bit 0): a word ending in another
 * letter or a digit matches none of them, and skips the list at once (mail's raw tokens are
 * mostly words no rule applies to: ids, hashes, encoded fragments).
 */
function lastLetters(suffixes: string[]): u32 {
  let bits: u32 = 0;
  for (let r = 0; r < suffixes.length; r++) bits |= <u32>1 << <u32>(suffixes[r].charCodeAt(suffixes[r].length - 1) - 0x61);
  return bits;
}

/** Whether c (a byte of the word) is a letter whose bit is set in `bits`. */
@inline function endsIn(bits: u32, c: u32): bool {
  return c - 0x61 < 26 && ((bits >> (c - 0x61)) & 1) != 0;
}

const STEP2_LAST = lastLetters(STEP2_SUFFIXES);
const STEP3_LAST = lastLetters(STEP3_SUFFIXES);

/** Scratch for the original word of replaceSuffixes (tokens are at most 255 bytes, plus room). */
let original: usize = 0;

function replaceSuffixes(w: usize, n: i32, suffixes: string[], replacements: string[], lastBits: u32): i32 {
  if (n == 0 || !endsIn(lastBits, at(w, n - 1))) return n;
  memory.copy(original, w, <usize>n);
  let cur = n;
  const last = at(w, n - 1);
  for (let r = 0; r < suffixes.length; r++) {
    const suffix = suffixes[r];
    const k = suffix.length;
    if (<u32>suffix.charCodeAt(k - 1) != last) continue;
    if (!endsWith(original, n, suffix) || !(measure2(original, n - k) > 0)) continue;
    if (endsWith(w, cur, suffix)) {
      const replacement = replacements[r];
      const next = cur - k + replacement.length;
      if (next == 0) continue;
      for (let j = 0; j < replacement.length; j++) store<u8>(w + <usize>(cur - k + j), <u8>replacement.charCodeAt(j));
      cur = next;
    }
  }
  return cur;
}

const STEP4_SUFFIXES: string[] = ['al', 'ance', 'ence', 'er', 'ic', 'able', 'ible', 'ant', 'ement', 'ment', 'ent', 'ou', 'ism', 'ate', 'iti', 'ous', 'ive', 'ize'];

const STEP4_LAST = lastLetters(STEP4_SUFFIXES);

function step4(w: usize, n: i32): i32 {
  if (n < 2) return n;
  let longest = 0;
  // No suffix of the list ends in another letter ('ion', below, ends in n: not one of them).
  if (endsIn(STEP4_LAST, at(w, n - 1))) {
    for (let k = 0; k < STEP4_SUFFIXES.length; k++) {
      const s = STEP4_SUFFIXES[k];
      if (s.length > longest && s.length < n && endsWith(w, n, s)) longest = s.length;
    }
  }
  if (longest > 0) return measure2(w, n - longest) > 2 ? n - longest : n;
  if (n >= 5 && endsWith(w, n, 'ion')) {
    const st = at(w, n - 4);
    if ((st == 0x73 || st == 0x74) && measure2(w, n - 3) > 2) return n - 3;
  }
  return n;
}

function step5a(w: usize, n: i32): i32 {
  if (n == 0 || at(w, n - 1) != 0x65) return n;
  const m2 = measure2(w, n - 1);
  if (m2 > 2) return n - 1;
  if (m2 == 2) {
    const prev = n >= 2 ? at(w, n - 2) : 0x77;
    const starO = n >= 4 && isCvcAt(w, n - 4) && prev != 0x77 && prev != 0x78 && prev != 0x79;
    if (!starO) return n - 1;
  }
  return n;
}

function step5b(w: usize, n: i32): i32 {
  if (n >= 2 && at(w, n - 1) == 0x6c && at(w, n - 2) == 0x6c && measure2(w, n) > 2) return n - 1;
  return n;
}

/** Stems the lowercase ASCII word w[0, n) in place (w has room for n + 1 bytes); returns its new length. */
export function porterStemBytes(w: usize, n: i32, scratch: usize): i32 {
  if (n < 3) return n;
  original = scratch;
  n = step1a(w, n);
  n = step1b(w, n);
  n = step1c(w, n);
  n = replaceSuffixes(w, n, STEP2_SUFFIXES, STEP2_REPLACEMENTS, STEP2_LAST);
  n = replaceSuffixes(w, n, STEP3_SUFFIXES, STEP3_REPLACEMENTS, STEP3_LAST);
  n = step4(w, n);
  n = step5a(w, n);
  n = step5b(w, n);
  return n;
}
