/**
 * A closed lexicon generation on disk (merge/spilled-lexicon.ts) reads back as it was written,
 * any terms and ids; a file cut short or of another kind is refused with its path.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { byteLexicon } from '../merge/lexicon-union.js';
import { readSpilledLexicon, writeSpilledLexicon } from '../merge/spilled-lexicon.js';

const dir = mkdtempSync(join(tmpdir(), 'gpuindex-spill-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const byUtf8 = (a: string, b: string) => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
let n = 0;

describe('a spilled lexicon generation', () => {
  it('reads back the terms and ids it was written with (fuzzed)', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.string({ unit: fc.constantFrom('a', 'q', 'é', '中', '😀', '9'), minLength: 1, maxLength: 6 }), { maxLength: 60 }), (terms) => {
        const sorted = [...terms].sort(byUtf8);
        const order = Uint32Array.from(sorted.map((_, i) => (i * 7 + 3) % Math.max(1, sorted.length)));
        const path = join(dir, `g${n++}.bin`);
        const written = writeSpilledLexicon(path, { terms: byteLexicon(sorted), order });
        expect(readFileSync(path).length).toBe(written);
        const back = readSpilledLexicon(path);
        expect(Array.from(back.order)).toEqual(Array.from(order));
        const text = Buffer.from(back.terms.bytes).toString('utf8');
        expect(text).toBe(sorted.map((t) => t + '\0').join(''));
        let at = 0;
        expect(Array.from(back.terms.ends)).toEqual(sorted.map((t) => (at += Buffer.byteLength(t) + 1) - 1));
      }),
      { numRuns: 100 },
    );
  });

  it('refuses a file cut short, or not a generation, naming it', () => {
    const path = join(dir, 'whole.bin');
    writeSpilledLexicon(path, { terms: byteLexicon(['ant', 'bee', 'cat']), order: Uint32Array.from([2, 0, 1]) });
    const whole = readFileSync(path);
    const cut = join(dir, 'cut.bin');
    writeFileSync(cut, whole.subarray(0, whole.length - 1));
    expect(() => readSpilledLexicon(cut)).toThrow(/cut\.bin.*cut short/);
    const other = join(dir, 'other.bin');
    writeFileSync(other, Buffer.alloc(whole.length, 7));
    expect(() => readSpilledLexicon(other)).toThrow(/other\.bin/);
    writeFileSync(other, Buffer.alloc(3));
    expect(() => readSpilledLexicon(other)).toThrow(/other\.bin/);
  });
});
