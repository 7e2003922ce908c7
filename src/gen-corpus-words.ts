/**
 * The words of gen-corpus's growing vocabulary beyond its real word list: one deterministic
 * string per rank, made of the rank alone, so any thread writes the same word for a rank.
 *
 * Ranks past the list (L words) take ten kinds in turn, t = rank − L − 1, kind = t mod 10,
 * j = ⌊t / 10⌋, so every kind keeps its share at every size:
 * - 0–5 (60 %): pseudo-words of two syllables or more, the syllables being the digits of a
 *   number in bijective base 490 (onset × vowel × optional coda): "tamolis", "vefrun";
 * - 6 (10 %): names: a pseudo-word and a surname ending ("hanosky", "rebinwicz", "dalovic");
 * - 7 (10 %): typos: a real word of the list's first 20,000 with one letter replaced;
 * - 8 (10 %): identifiers: letters and a number ("v17", "rfc2616", "cve4411");
 * - 9 (10 %): numbers.
 * Kinds cannot produce each other's words: pseudo-words end in a vowel or one of the codas
 * n r s l m t and use no k w y z j q x; names end in y z g v d c k; identifiers mix letters and
 * digits; numbers are digits. Pseudo-words and names are one-to-one with j. A pseudo-word that
 * is a real word takes a final q; a typo that is a real word or could be
 * another kind's word, or a rank past its base word's 25 typos per letter, is the pseudo-word
 * of j with a final x. Two typos can still coincide (substituting into "cat" and "bat" both
 * give "hat"): rare, and the tests count it.
 */

const ONSETS = 'bcdfghlmnprstv';
const VOWELS = 'aeiou';
const CODAS = ['', 'n', 'r', 's', 'l', 'm', 't'];
const SYLLABLES = ONSETS.length * VOWELS.length * CODAS.length; // 490
const NAME_ENDINGS = ['sky', 'wicz', 'berg', 'ez', 'ov', 'ard', 'ovic', 'ek', 'field', 'wood'];
const ID_PREFIXES = ['v', 'x', 'id', 'rfc', 'cve', 'ipv', 'mp', 'win', 'utf', 'iso', 'sha', 'r', 'b', 'el', 'gt', 'k'];
const TYPO_BASES = 20_000;
/** A word another kind could make: syllable-shaped (pseudo-words, with their q) or ending like a name. */
const OTHER_KINDS = new RegExp(`^([${ONSETS}][${VOWELS}][${CODAS.join('')}]?){2,}q?$|(${NAME_ENDINGS.join('|')})$`);
const LETTERS = 'abcdefghijklmnopqrstuvwxyz';

/** The pseudo-word of j ≥ 0: j + 491 in bijective base 490 (two digits at least), low digit first. */
export function syllableWord(j: number): string {
  let n = j + SYLLABLES + 1;
  let s = '';
  while (n > 0) {
    let d = n % SYLLABLES;
    if (d === 0) d = SYLLABLES;
    n = (n - d) / SYLLABLES;
    const x = d - 1;
    s += ONSETS[x % ONSETS.length]! + VOWELS[Math.floor(x / ONSETS.length) % VOWELS.length]! + CODAS[Math.floor(x / (ONSETS.length * VOWELS.length))]!;
  }
  return s;
}

/** One letter of a real word replaced: position and letter from e (the letter always differs). */
function typo(word: string, e: number): string | undefined {
  const letters = [...word].map((ch, i) => [ch, i] as const).filter(([ch]) => ch >= 'a' && ch <= 'z');
  // Each word has 25 typos per letter; past them the rank takes the fallback.
  if (letters.length === 0 || e >= 25 * letters.length) return undefined;
  const [ch, at] = letters[e % letters.length]!;
  const shift = 1 + Math.floor(e / letters.length);
  const replaced = LETTERS[(LETTERS.indexOf(ch) + shift) % 26]!;
  return word.slice(0, at) + replaced + word.slice(at + 1);
}

/**
 * The word of a rank beyond the real list. `words` is the list (rank r ≤ words.length is
 * words[r − 1]) and `real` its set.
 */
export function pseudoWord(rank: number, words: readonly string[], real: ReadonlySet<string>): string {
  const t = rank - words.length - 1;
  const kind = t % 10;
  const j = (t - kind) / 10;
  if (kind <= 5) {
    const w = syllableWord(6 * j + kind);
    return real.has(w) ? w + 'q' : w;
  }
  if (kind === 6) return syllableWord(Math.floor(j / NAME_ENDINGS.length)) + NAME_ENDINGS[j % NAME_ENDINGS.length]!;
  if (kind === 7) {
    const bases = Math.min(TYPO_BASES, words.length);
    const w = typo(words[j % bases]!, Math.floor(j / bases));
    return w === undefined || real.has(w) || OTHER_KINDS.test(w) ? syllableWord(j) + 'x' : w;
  }
  if (kind === 8) return ID_PREFIXES[j % ID_PREFIXES.length]! + String(Math.floor(j / ID_PREFIXES.length));
  return String(j);
}
