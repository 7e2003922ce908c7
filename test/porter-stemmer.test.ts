import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { porterStem } from '../indexer/analysis/porter-stemmer.js';

const natural = createRequire(import.meta.url)('natural/lib/natural/stemmers/porter_stemmer') as { stem(word: string): string };

/** [word, natural's stem, porterStem] for each word where the two differ. */
function mismatches(words: Iterable<string>): Array<[string, string, string]> {
  const out: Array<[string, string, string]> = [];
  for (const w of words) {
    const expected = natural.stem(w);
    const got = porterStem(w);
    if (got !== expected) out.push([w, expected, got]);
  }
  return out;
}

/** Every distinct lowercase word (split on non-letters) of the files under corpus-samples/. */
function corpusWords(): string[] {
  const words = new Set<string>();
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, e.name);
      if (e.isDirectory()) walk(path);
      else {
        const raw = readFileSync(path);
        const text = (path.endsWith('.gz') ? gunzipSync(raw) : raw).toString('utf8');
        for (const w of text.toLowerCase().split(/[^\p{L}]+/u)) if (w !== '') words.add(w);
      }
    }
  };
  walk('corpus-samples');
  return [...words];
}

const SUFFIXES = (
  'ational tional enci anci izer abli bli alli entli eli ousli ization ation ator alism iveness fulness ousness aliti iviti ' +
  'biliti logi icate ative alize iciti ical ful ness al ance ence er ic able ible ant ement ment ent ion sion tion ou ism ate ' +
  'iti ous ive ize s ss ies sses ed ing eed y e ll at bl iz'
).split(' ');

describe('porterStem: same output as natural PorterStemmer.stem', () => {
  const words = corpusWords();

  it('on every distinct word of corpus-samples', () => {
    expect(words.length).toBeGreaterThan(10_000);
    expect(mismatches(words)).toEqual([]);
  });

  it('on every corpus word with each Porter suffix appended', () => {
    const generated = new Set<string>();
    for (const w of words) for (const s of SUFFIXES) generated.add(w + s);
    expect(generated.size).toBeGreaterThan(500_000);
    expect(mismatches(generated)).toEqual([]);
  });

  it('on random strings of a Porter-heavy alphabet with digits and é (fast-check)', () => {
    const unit = fc.oneof(
      { arbitrary: fc.constantFrom(...'abcdeilmnorstuvwyz'), weight: 20 },
      { arbitrary: fc.constantFrom(...'0123456789é'), weight: 1 },
    );
    fc.assert(
      fc.property(fc.string({ unit, minLength: 0, maxLength: 15 }), (w) => porterStem(w) === natural.stem(w)),
      { numRuns: 20_000 },
    );
  });

  it('on edge cases and the classic examples', () => {
    const cases = [
      '', 'a', 'ab', 'AB', 'CV', 'Cv', 'sky', 'yes', 'syzygy', 'yyy', 'bya', 'caresses', 'ponies', 'ties', 'caress', 'cats',
      'feed', 'agreed', 'plastered', 'bled', 'motoring', 'sing', 'ed', 'ing', 'eds', 'conflated', 'troubled', 'sized',
      'hopping', 'tanned', 'falling', 'hissing', 'fizzed', 'failing', 'filing', 'happy', 'relational', 'conditional',
      'rational', 'generalization', 'oscillator', 'electrical', 'hopeful', 'goodness', 'revival', 'allowance', 'adjustment',
      'replacement', 'dependent', 'adoption', 'controll', 'roll', 'rate', 'cease', 'probate', 'CARESSES', 'Relational',
      '1990s', '3rd', '2000', 'x86', 'a\nb\ncational', 'é', 'café', 'naïveté', 'straße', 'ελληνικά', 'привет', 'İstanbul',
    ];
    expect(mismatches(cases)).toEqual([]);
    // A few fixed values, so that a change in natural itself shows here too.
    expect(porterStem('')).toBe('');
    expect(porterStem('AB')).toBe('AB'); // shorter than 3: returned as given, not lowercased
    expect(porterStem('caresses')).toBe('caress');
    expect(porterStem('ponies')).toBe('poni');
    expect(porterStem('relational')).toBe('relat');
    expect(porterStem('generalization')).toBe('gener');
    expect(porterStem('hopping')).toBe('hop');
    expect(porterStem('filing')).toBe('file');
    expect(porterStem('happy')).toBe('happi');
    expect(porterStem('controll')).toBe('control');
  });
});
