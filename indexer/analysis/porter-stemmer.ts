/**
 * The Porter stemmer of the npm package `natural` (8.x, lib/natural/stemmers/porter_stemmer.js),
 * reimplemented without regular expressions and with almost no allocation: a string is only
 * sliced when a step changes the word. `porterStem(w)` returns exactly what natural's
 * `PorterStemmer.stem(w)` returns, for every string, natural's quirks included (each one is
 * pointed out where it is reproduced). The test test/porter-stemmer.test.ts compares both.
 *
 * Everything works on UTF-16 code units, as natural's regexes (no `u` flag) do: any unit other
 * than a, e, i, o, u and y (digits, é, ß, Greek, Cyrillic, surrogate halves) counts as a consonant.
 */

const C_A = 0x61, C_E = 0x65, C_I = 0x69, C_O = 0x6f, C_U = 0x75, C_Y = 0x79;
const C_B = 0x62, C_L = 0x6c, C_S = 0x73, C_T = 0x74, C_W = 0x77, C_X = 0x78, C_Z = 0x7a;

/** [aeiou] */
function isVowel(c: number): boolean {
  return c === C_A || c === C_E || c === C_I || c === C_O || c === C_U;
}

/** [aeiouy] */
function isVowelOrY(c: number): boolean {
  return c === C_Y || isVowel(c);
}

/** What the regex `.` does not match (no `s` flag): \n, \r, U+2028, U+2029. */
function isLineTerminator(c: number): boolean {
  return c === 0x0a || c === 0x0d || c === 0x2028 || c === 0x2029;
}

/** w (of length n) ends with suffix (no allocation; false when w is shorter). */
function endsWith(w: string, n: number, suffix: string): boolean {
  const k = suffix.length;
  if (k > n) return false;
  for (let j = 0; j < k; j++) if (w.charCodeAt(n - k + j) !== suffix.charCodeAt(j)) return false;
  return true;
}

const SYM_NONE = 0, SYM_C = 1, SYM_V = 2;

/**
 * natural's measure(s.slice(0, end)). natural builds categorizeGroups(token) =
 * token.replace(/[^aeiouy]+y/g, 'CV').replace(/[aeiou]+/g, 'V').replace(/[^V]+/g, 'C'), drops
 * one leading 'C' and one trailing 'V' and halves the length. Quirks kept:
 * - a run of consonants followed by 'y' becomes 'CV' (the y is a vowel there), but that 'V' is not
 *   merged with vowels right after it ('bya' -> 'CVV'), so the measure can be fractional (0.5);
 * - a 'y' not preceded by a consonant run stays a consonant and merges with its neighbours;
 * - measure('') is -1.
 * Returned DOUBLED, an integer (2m; -2 for ''), so that V8 keeps it a small integer: callers test
 * m > 0, m > 1, m === 1 as measure2 > 0, > 2, === 2.
 */
function measure2(s: string, end: number): number {
  if (end <= 0) return -2;
  let length = 0;
  let first = SYM_NONE;
  let last = SYM_NONE;
  let i = 0;
  while (i < end) {
    const c = s.charCodeAt(i);
    let sym: number;
    let then = SYM_NONE; // a second symbol, for the 'CV' of a consonant run + y
    if (isVowel(c)) {
      // /[aeiou]+/ -> 'V'
      i++;
      while (i < end && isVowel(s.charCodeAt(i))) i++;
      sym = SYM_V;
    } else if (c === C_Y) {
      // a y after a vowel, after another y, or first: left as is, then /[^V]+/ -> 'C'
      i++;
      sym = SYM_C;
    } else {
      // a maximal run of [^aeiouy]; with a y right after it, /[^aeiouy]+y/ -> 'CV'
      let j = i + 1;
      while (j < end && !isVowelOrY(s.charCodeAt(j))) j++;
      sym = SYM_C;
      if (j < end && s.charCodeAt(j) === C_Y) {
        then = SYM_V;
        i = j + 1;
      } else {
        i = j;
      }
    }
    // /[^V]+/ -> 'C' merges consecutive C's; V's are never merged.
    if (!(sym === SYM_C && last === SYM_C)) {
      length++;
      if (first === SYM_NONE) first = sym;
      last = sym;
    }
    if (then !== SYM_NONE) {
      length++;
      last = then;
    }
  }
  if (first === SYM_C) length--; // .replace(/^C/, '')
  if (last === SYM_V) length--; // .replace(/V$/, '') (a one-symbol string is only shortened once)
  return length;
}

/**
 * categorizeGroups(s.slice(0, end)).indexOf('V') >= 0: a vowel, or a 'y' right after a
 * consonant (the end of a [^aeiouy]+ run, which /[^aeiouy]+y/ turns into 'CV').
 */
function hasVowelGroup(s: string, end: number): boolean {
  for (let p = 0; p < end; p++) {
    const c = s.charCodeAt(p);
    if (isVowel(c)) return true;
    if (c === C_Y && p > 0 && !isVowelOrY(s.charCodeAt(p - 1))) return true;
  }
  return false;
}

/**
 * Whether categorizeChars(s)[p] is 'C'. natural: replace(/[^aeiouy]y/g, 'CV') then [aeiou] -> 'V'
 * and [^V] -> 'C', so a 'y' is a vowel exactly when the unit before it is not in [aeiouy]
 * (the non-overlapping global scan cannot consume that unit elsewhere, since it is not a 'y').
 */
function isConsonantAt(s: string, p: number): boolean {
  const c = s.charCodeAt(p);
  if (isVowel(c)) return false;
  if (c === C_Y) return p === 0 || isVowelOrY(s.charCodeAt(p - 1));
  return true;
}

/** categorizeChars(s) has 'CVC' at p, p + 1, p + 2. */
function isCvcAt(s: string, p: number): boolean {
  return isConsonantAt(s, p) && !isConsonantAt(s, p + 1) && isConsonantAt(s, p + 2);
}

/** Step 1a: sses -> ss, ies -> i, s -> '' (not after another s, only when longer than 2). */
function step1a(w: string): string {
  const n = w.length;
  // /(ss|i)es$/ -> '$1'
  if (endsWith(w, n, 'sses') || endsWith(w, n, 'ies')) return w.slice(0, n - 2);
  // substr(-1) === 's' && substr(-2, 1) !== 's' && length > 2, then /s?$/ -> ''
  if (n > 2 && w.charCodeAt(n - 1) === C_S && w.charCodeAt(n - 2) !== C_S) return w.slice(0, n - 1);
  return w;
}

/** Step 1b: (m>0) eed -> ee; (*v*) ed, ing -> '' with the at/bl/iz, double-consonant and CVC fixes. */
function step1b(w: string): string {
  const n = w.length;
  if (endsWith(w, n, 'eed')) {
    // An 'eed' word never loses 'ed', even when its measure is too small for eed -> ee.
    return measure2(w, n - 3) > 0 ? w.slice(0, n - 1) : w;
  }
  let end: number;
  if (endsWith(w, n, 'ed')) end = n - 2;
  else if (endsWith(w, n, 'ing')) end = n - 3;
  else return w;
  // attemptReplace only calls back on a non-empty result: 'ed' or 'ing' alone is kept unchanged.
  if (end === 0) return w;
  if (!hasVowelGroup(w, end)) return w;
  const stem = w.slice(0, end);
  const last = stem.charCodeAt(end - 1);
  // at -> ate, bl -> ble, iz -> ize (attemptReplacePatterns without a measure threshold).
  if (end >= 2) {
    const prev = stem.charCodeAt(end - 2);
    if ((prev === C_A && last === C_T) || (prev === C_B && last === C_L) || (prev === C_I && last === C_Z)) return stem + 'e';
    // /([^aeiou])\1$/ (y and digits count) and /[^lsz]$/: drop one of the pair.
    if (prev === last && !isVowel(last) && last !== C_L && last !== C_S && last !== C_Z) return stem.slice(0, end - 1);
  }
  // m = 1 and categorizeChars(stem).substr(-3) === 'CVC' and /[^wxy]$/: add an e.
  if (end >= 3 && last !== C_W && last !== C_X && last !== C_Y && isCvcAt(stem, end - 3) && measure2(stem, end) === 2) return stem + 'e';
  return stem;
}

/** Step 1c: y -> i when the groups before the final y hold a vowel. */
function step1c(w: string): string {
  const n = w.length;
  // categorizeGroups(w) minus its last symbol holds a 'V' exactly when categorizeGroups(w minus
  // the y) does: the final y adds one trailing symbol (its 'V' of 'CV', or a 'C').
  if (n > 0 && w.charCodeAt(n - 1) === C_Y && hasVowelGroup(w, n - 1)) return w.slice(0, n - 1) + 'i';
  return w;
}

/** A rule [suffix, replacement]. */
interface Rule {
  readonly suffix: string;
  readonly replacement: string;
}

/** Rules bucketed by the last letter of their suffix (ASCII only), in natural's order. */
type RuleTable = ReadonlyArray<readonly Rule[]>;

function ruleTable(rules: ReadonlyArray<readonly [string, string]>): RuleTable {
  const table: Rule[][] = [];
  for (let c = 0; c < 128; c++) table.push([]);
  for (const [suffix, replacement] of rules) table[suffix.charCodeAt(suffix.length - 1)].push({ suffix, replacement });
  return table;
}

/**
 * natural's replacePatterns(token, rules, 0), quirks kept: EVERY rule is tried, in order; the
 * measure test looks at the ORIGINAL word minus the rule's suffix, while the replacement is made
 * on the word as already changed by the rules before it (if it still ends with the suffix), and a
 * replacement that would leave '' is not made.
 */
function replaceSuffixes(w: string, table: RuleTable): string {
  const n = w.length;
  if (n === 0) return w;
  const c = w.charCodeAt(n - 1);
  if (c >= 128) return w;
  const rules = table[c];
  let current = w;
  for (let r = 0; r < rules.length; r++) {
    const { suffix, replacement } = rules[r];
    if (!endsWith(w, n, suffix) || !(measure2(w, n - suffix.length) > 0)) continue;
    if (endsWith(current, current.length, suffix)) {
      const next = current.slice(0, current.length - suffix.length) + replacement;
      if (next !== '') current = next;
    }
  }
  return current;
}

const STEP2 = ruleTable([
  ['ational', 'ate'], ['tional', 'tion'], ['enci', 'ence'], ['anci', 'ance'], ['izer', 'ize'], ['abli', 'able'],
  ['bli', 'ble'], ['alli', 'al'], ['entli', 'ent'], ['eli', 'e'], ['ousli', 'ous'], ['ization', 'ize'],
  ['ation', 'ate'], ['ator', 'ate'], ['alism', 'al'], ['iveness', 'ive'], ['fulness', 'ful'], ['ousness', 'ous'],
  ['aliti', 'al'], ['iviti', 'ive'], ['biliti', 'ble'], ['logi', 'log'],
]);

const STEP3 = ruleTable([
  ['icate', 'ic'], ['ative', ''], ['alize', 'al'], ['iciti', 'ic'], ['ical', 'ic'], ['ful', ''], ['ness', ''],
]);

/** Step 2: (m>0) ational -> ate, tional -> tion, ... */
function step2(w: string): string {
  return replaceSuffixes(w, STEP2);
}

/** Step 3: (m>0) icate -> ic, ative -> '', ... */
function step3(w: string): string {
  return replaceSuffixes(w, STEP3);
}

/** Step 4's suffixes, bucketed by last letter. */
const STEP4: ReadonlyArray<readonly string[]> = (() => {
  const table: string[][] = [];
  for (let c = 0; c < 128; c++) table.push([]);
  for (const s of ['al', 'ance', 'ence', 'er', 'ic', 'able', 'ible', 'ant', 'ement', 'ment', 'ent', 'ou', 'ism', 'ate', 'iti', 'ous', 'ive', 'ize']) {
    table[s.charCodeAt(s.length - 1)].push(s);
  }
  return table;
})();

/** No regex line terminator in s.slice(0, end), so that `.+` can match it. */
function matchesDotPlus(s: string, end: number): boolean {
  if (end === 0) return false;
  for (let p = 0; p < end; p++) if (isLineTerminator(s.charCodeAt(p))) return false;
  return true;
}

/**
 * Step 4: (m>1) drop al, ance, ..., ize; or (m>1) (s|t)ion -> (s|t).
 * natural: /^(.+?)(al|ance|...|ize)$/. The lazy .+? tries prefixes from length 1 up, and at each
 * length an alternative must run to the end, so the regex picks the LONGEST listed suffix that
 * leaves a non-empty prefix ('ement' over 'ment' over 'ent'). If that prefix's measure is not > 1,
 * no shorter suffix is tried; natural goes on to /^(.+?)(s|t)(ion)$/. Neither regex matches when
 * the prefix holds a line terminator (`.`).
 */
function step4(w: string): string {
  const n = w.length;
  if (n < 2) return w;
  const c = w.charCodeAt(n - 1);
  if (c < 128) {
    const suffixes = STEP4[c];
    let longest = 0;
    for (let k = 0; k < suffixes.length; k++) {
      const s = suffixes[k];
      if (s.length > longest && s.length < n && endsWith(w, n, s)) longest = s.length;
    }
    if (longest > 0 && matchesDotPlus(w, n - longest)) {
      if (measure2(w, n - longest) > 2) return w.slice(0, n - longest);
      return w; // the (s|t)ion regex cannot match a word ending in one of these suffixes
    }
  }
  if (n >= 5 && endsWith(w, n, 'ion')) {
    const st = w.charCodeAt(n - 4);
    if ((st === C_S || st === C_T) && matchesDotPlus(w, n - 4) && measure2(w, n - 3) > 2) return w.slice(0, n - 3);
  }
  return w;
}

/**
 * Step 5a: (m>1) e -> ''; (m=1 and not *o) e -> ''. natural's *o test is
 * categorizeChars(w).substr(-4, 3) === 'CVC' (the three units before the final e; for a word of
 * 3 units it reads units 0..2, which end in the 'e', a V, so it never holds) and /[^wxy].$/.
 */
function step5a(w: string): string {
  const n = w.length;
  if (n === 0 || w.charCodeAt(n - 1) !== C_E) return w; // .replace(/e$/, '') changes nothing
  const m2 = measure2(w, n - 1);
  if (m2 > 2) return w.slice(0, n - 1);
  if (m2 === 2) {
    const prev = n >= 2 ? w.charCodeAt(n - 2) : C_W;
    const starO = n >= 4 && isCvcAt(w, n - 4) && prev !== C_W && prev !== C_X && prev !== C_Y;
    if (!starO) return w.slice(0, n - 1);
  }
  return w;
}

/** Step 5b: (m>1) ll -> l. */
function step5b(w: string): string {
  const n = w.length;
  if (n >= 2 && w.charCodeAt(n - 1) === C_L && w.charCodeAt(n - 2) === C_L && measure2(w, n) > 2) return w.slice(0, n - 1);
  return w;
}

/**
 * natural's PorterStemmer.stem(token). A token shorter than 3 UTF-16 units is returned as given,
 * NOT lowercased (natural tests the length before lowercasing); any other is lowercased first.
 */
export function porterStem(token: string): string {
  if (token.length < 3) return token;
  return step5b(step5a(step4(step3(step2(step1c(step1b(step1a(token.toLowerCase()))))))));
}
