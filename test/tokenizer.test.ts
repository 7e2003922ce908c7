import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { UserError } from '../src/shared/errors.js';
import { createTokenizer, MAX_TOKEN_LENGTH, resolveTokenizerOptions, scanUnicodeWith, UNICODE_RUN_CAP, unicodeTokenPattern, wordRestPattern, type TokenizerOptions } from '../indexer/analysis/tokenizer.js';
import { ENGLISH_STOPWORDS } from '../indexer/analysis/english-stopwords.js';

const work = mkdtempSync(join(tmpdir(), 'gpuindex-tok-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const RAW: TokenizerOptions = { stem: 'none', stopwords: 'none' };
function terms(text: string, options: TokenizerOptions = RAW): string[] {
  const out: string[] = [];
  const n = createTokenizer(options).tokenize(text, (t) => out.push(t));
  expect(n).toBe(out.length);
  return out;
}

describe('tokenizer: scripts and characters', () => {
  it('keeps accented words whole (São Paulo -> são, paulo), unlike natural.WordTokenizer', () => {
    expect(terms('São Paulo')).toEqual(['são', 'paulo']);
    expect(terms('Crème brûlée à la française, Ærø, Łódź, İstanbul')).toEqual(['crème', 'brûlée', 'à', 'la', 'française', 'ærø', 'łódź', 'i̇stanbul']);
  });

  it('NFKC-normalizes: decomposed accents, ligatures, full-width and half-width forms, compatibility digits', () => {
    expect(terms('Sa\u0303o')).toEqual(['são']); // a + combining tilde == ã
    expect(terms('ﬁne ﬂow')).toEqual(['fine', 'flow']);
    expect(terms('ＡＢＣ１２３ ｶﾀｶﾅ')).toEqual(['abc123', 'カ', 'タ', 'カ', 'ナ']);
    expect(terms('x² ① Ⅻ')).toEqual(['x2', '1', 'xii']);
  });

  it('folds ß and ẞ to ss, so Straße matches STRASSE', () => {
    expect(terms('Straße STRASSE ẞ groß')).toEqual(['strasse', 'strasse', 'ss', 'gross']);
  });

  it('splits Han, Hiragana and Katakana into single characters; keeps Hangul words', () => {
    expect(terms('東京は日本の首都です。')).toEqual(['東', '京', 'は', '日', '本', 'の', '首', '都', 'で', 'す']);
    expect(terms('カタカナ')).toEqual(['カ', 'タ', 'カ', 'ナ']);
    expect(terms('서울특별시 한국어')).toEqual(['서울특별시', '한국어']);
    expect(terms('iPhone手机ABC')).toEqual(['iphone', '手', '机', 'abc']);
    expect(terms('𠮷野家')).toEqual(['𠮷', '野', '家']); // a supplementary-plane ideograph stays one term
  });

  it('makes overlapping bigrams with cjk: bigram (a lone ideograph stays a unigram)', () => {
    const o: TokenizerOptions = { ...RAW, cjk: 'bigram' };
    expect(terms('東京は日本', o)).toEqual(['東京', '京は', 'は日', '日本']);
    expect(terms('東 京', o)).toEqual(['東', '京']);
    expect(terms('𠮷野家 word', o)).toEqual(['𠮷野', '野家', 'word']);
  });

  it('keeps Arabic, Hebrew, Devanagari, Thai and Cyrillic words whole (combining marks included) and never stems them', () => {
    expect(terms('مرحبا بالعالم', { stem: 'porter' })).toEqual(['مرحبا', 'بالعالم']);
    expect(terms('שָׁלוֹם עולם')).toEqual(['שָׁלוֹם', 'עולם']);
    expect(terms('हिन्दी भाषा', { stem: 'porter' })).toEqual(['हिन्दी', 'भाषा']);
    expect(terms('Привет, МИР!', { stem: 'porter' })).toEqual(['привет', 'мир']);
    expect(terms('ภาษาไทย')).toEqual(['ภาษาไทย']);
  });

  it('removes zero-width (non-)joiners inside words (Persian)', () => {
    expect(terms('می\u200cخواهم')).toEqual(['میخواهم']);
  });

  it('treats digits as tokens and punctuation as separators', () => {
    expect(terms('In 1851, 3.14 and 1,000 (v2) x86_64 e-mail')).toEqual(['in', '1851', '3', '14', 'and', '1', '000', 'v2', 'x86', '64', 'e', 'mail']);
    expect(terms('٣٤ ۱۲')).toEqual(['٣٤', '۱۲']); // Arabic-Indic digits are digits too
  });

  it('never makes tokens of emoji, variation selectors, skin tones, ZWJ sequences or keycaps', () => {
    expect(terms('I ❤️ NY 👍🏽 🏳️‍🌈 👨‍👩‍👧 1️⃣ #️⃣ ✓')).toEqual(['i', 'ny', '1']);
    expect(terms('😀😀😀')).toEqual([]);
    expect(terms('')).toEqual([]);
  });

  it('joins words around an apostrophe: don\'t -> dont, O’Brien -> obrien (typographic apostrophe too)', () => {
    expect(terms("Don't O’Brien whale's 'quoted' rock 'n' roll students' ’tis")).toEqual(['dont', 'obrien', 'whales', 'quoted', 'rock', 'n', 'roll', 'students', 'tis']);
    expect(terms("l'été")).toEqual(['lété']);
  });

  it('drops tokens longer than MAX_TOKEN_LENGTH', () => {
    expect(terms(`${'a'.repeat(MAX_TOKEN_LENGTH + 1)} ok ${'b'.repeat(MAX_TOKEN_LENGTH)}`)).toEqual(['ok', 'b'.repeat(MAX_TOKEN_LENGTH)]);
  });
});

describe('tokenizer: stopwords and stemming', () => {
  it("uses natural's English stopword list, word for word (natural is a test dependency only)", () => {
    const natural = createRequire(import.meta.url)('natural/lib/natural/util/stopwords') as { words: string[] };
    expect([...ENGLISH_STOPWORDS]).toEqual(natural.words);
    expect(createTokenizer().stopwords).toEqual(new Set(natural.words.filter((w) => /^[a-z0-9]+$/.test(w))));
  });

  it('removes English stopwords (natural) by default, before stemming', () => {
    expect(terms('The whale and the sea', { stem: 'none' })).toEqual(['whale', 'sea']);
    expect(terms('The whale and the sea', RAW)).toEqual(['the', 'whale', 'and', 'the', 'sea']);
    // stopwords are matched on the unstemmed word: "doing" is a stopword, "does" too
    expect(terms('doing does done', { stem: 'porter' })).toEqual(['done']);
  });

  it('stems Latin-script words with Porter; stem none leaves them', () => {
    expect(terms('running ponies whales caresses', { stopwords: 'none' })).toEqual(['run', 'poni', 'whale', 'caress']);
    expect(terms('running ponies', { stem: 'none', stopwords: 'none' })).toEqual(['running', 'ponies']);
    expect(terms('cafés 1990s', { stopwords: 'none' })).toEqual(['café', '1990']);
    expect(terms('東京 running', { stopwords: 'none', cjk: 'bigram' })).toEqual(['東京', 'run']);
  });

  it('is deterministic with the stem cache (same input, same output, across calls)', () => {
    const t = createTokenizer();
    const a: string[] = [];
    const b: string[] = [];
    t.tokenize('Whaling whales whaled', (x) => a.push(x));
    t.tokenize('Whaling whales whaled', (x) => b.push(x));
    expect(a).toEqual(b);
    expect(a).toEqual(['whale', 'whale', 'whale']);
  });

  it('reads a stopword file (one word a line, # comments, analysed like the text)', () => {
    const file = join(work, 'stop.txt');
    writeFileSync(file, '# my list\nwhale\r\n  Sea  \n\nDON’T\nstraße\n');
    const o: TokenizerOptions = { stem: 'none', stopwords: file };
    expect(terms("The whale, the SEA, don't strasse ship", o)).toEqual(['the', 'the', 'ship']);
    expect(createTokenizer(o).options.stopwords).toBe(resolve(file));
    const empty = join(work, 'empty.txt');
    writeFileSync(empty, '');
    expect(terms('the whale', { stem: 'none', stopwords: empty })).toEqual(['the', 'whale']);
  });
});

describe('tokenizer options', () => {
  it('has the documented defaults', () => {
    expect(resolveTokenizerOptions()).toEqual({ stem: 'porter', stopwords: 'english', cjk: 'unigram' });
    expect(createTokenizer().options).toEqual({ stem: 'porter', stopwords: 'english', cjk: 'unigram' });
  });

  it('rejects bad options with one clear line (UserError)', () => {
    const bad = (o: unknown): string => {
      try {
        resolveTokenizerOptions(o as TokenizerOptions);
      } catch (err) {
        expect(err).toBeInstanceOf(UserError);
        const m = (err as Error).message;
        expect(m.includes('\n')).toBe(false);
        return m;
      }
      throw new Error('expected an error');
    };
    expect(bad({ stem: 'snowball' })).toBe('--stem must be porter or none, got "snowball"');
    expect(bad({ cjk: 'trigram' })).toBe('--cjk must be unigram or bigram, got "trigram"');
    expect(bad({ stopwords: '' })).toMatch(/^--stopwords must be english, none or a file/);
    expect(bad({ stopwords: join(work, 'no-such-file.txt') })).toBe(`--stopwords must be english, none or a readable file: cannot read ${join(work, 'no-such-file.txt')} (ENOENT)`);
    expect(bad({ stopwords: work })).toMatch(/cannot read .* \(EISDIR\)$/);
    expect(() => createTokenizer({ stem: 'nope' as 'none' })).toThrow(UserError);
  });
});

describe('tokenizer properties', () => {
  it('with stem none and stopwords none, lowercase ASCII words separated by spaces and punctuation come back as they are', () => {
    const word = fc.stringMatching(/^[a-z0-9]{1,12}$/);
    const sep = fc.constantFrom(' ', '  ', ', ', '. ', '\n', '\t', ' — ', ' "', '" ', '; ', ' (', ') ');
    fc.assert(
      fc.property(fc.array(fc.tuple(word, sep), { maxLength: 40 }), (parts) => {
        const text = parts.map(([w, s]) => w + s).join('');
        expect(terms(text)).toEqual(parts.map(([w]) => w));
      }),
    );
  });

  it('never emits an empty term, and every term is already normalized (a fixed point)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 60 }), (text) => {
        for (const t of terms(text)) {
          expect(t.length).toBeGreaterThan(0);
          expect(terms(t)).toEqual([t]);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('gives the same terms for a text whatever its other non-word characters (ASCII and Unicode paths agree)', () => {
    const word = fc.stringMatching(/^[a-z]{1,8}$/);
    fc.assert(
      fc.property(fc.array(word, { minLength: 1, maxLength: 20 }), (words) => {
        expect(terms(words.join(' — '))).toEqual(terms(words.join(' - ')));
        expect(terms(words.join(' é '))).toEqual(words.flatMap((w, i) => (i === 0 ? [w] : ['é', w])));
      }),
    );
  });
});

describe('runs longer than the token pattern takes at once', () => {
  /** The raw tokens of scanUnicodeWith at `cap`. */
  const tokensAt = (cap: number, s: string, bigrams: boolean, maxLength: number): string[] => {
    const out: string[] = [];
    scanUnicodeWith(unicodeTokenPattern(cap), wordRestPattern(cap), cap, s, bigrams, maxLength, (t) => out.push(t));
    return out;
  };
  // CJK (one an astral Han), Latin, Cyrillic, a combining mark, the joiners, a variation selector, space and punctuation.
  const pieces = ['中', '文', 'か', '\u{20000}', 'a', 'é', 'ж', '\u0301', "'", '\u2019', '\u200C', '\u200D', '\uFE0F', ' ', '.', '-'];
  const text = fc.array(fc.tuple(fc.constantFrom(...pieces), fc.integer({ min: 1, max: 9 })), { maxLength: 30 }).map((runs) => runs.map(([p, n]) => p.repeat(n)).join(''));

  it('gives the tokens of the unbounded pattern: a CJK run cut at the cap keeps its bigram across the cut, a word cut there is dropped whole (fuzzed)', () => {
    fc.assert(
      fc.property(text, fc.integer({ min: 2, max: 6 }), fc.boolean(), fc.integer({ min: 1, max: 6 }), (s, cap, bigrams, lengthUpTo) => {
        // A word cut at the cap has more than cap code points: past any maxLength up to cap.
        const maxLength = Math.min(lengthUpTo, cap);
        expect(tokensAt(cap, s, bigrams, maxLength)).toEqual(tokensAt(UNICODE_RUN_CAP, s, bigrams, maxLength));
      }),
      { numRuns: 3000 },
    );
  });

  it('tokenizes a line of 4 M CJK characters or Cyrillic letters with no space (the unbounded pattern overflowed its stack)', () => {
    const t = createTokenizer({ cjk: 'bigram' });
    const cjk: string[] = [];
    t.tokenize('中文'.repeat(2_000_000), (x) => void (cjk.length < 3 && cjk.push(x)));
    expect(cjk).toEqual(['中文', '文中', '中文']);
    let count = 0;
    expect(t.tokenize('ж'.repeat(4_000_000) + ' слово', () => count++)).toBe(1);
    expect(count).toBe(1);
  });

  it('a build takes a 12 MB line of CJK with no space, and one of a single 4 M-letter word, beside short ones', async () => {
    const { buildIndex } = await import('../src/build.js');
    const { openIndex } = await import('../src/reader.js');
    const crawl = join(work, 'long-runs');
    const { mkdirSync } = await import('node:fs');
    mkdirSync(crawl);
    const docs = [
      { id: 'a', text: 'whale ship' },
      { id: 'cjk', text: '中文字'.repeat(1_400_000) },
      { id: 'word', text: 'ж'.repeat(4_000_000) + ' слово' },
      { id: 'b', text: 'sea' },
    ];
    writeFileSync(join(crawl, 'c.jsonl'), docs.map((d) => JSON.stringify(d)).join('\n') + '\n');
    const out = join(work, 'long-runs-index');
    const s = await buildIndex({ input: crawl, output: out, workers: 1, sorter: 'cpu' });
    expect(s.documents).toBe(4);
    expect(s.skipped.count).toBe(0);
    const r = openIndex(out);
    try {
      expect(r.lexiconEntry('文')?.df).toBe(1);
      expect(r.lexiconEntry('слово')?.df).toBe(1);
      expect(r.stats().terms).toBe(7); // whale ship sea 中 文 字 слово: the 4 M-letter word is too long to be a term
    } finally {
      r.close();
    }
  });
});
