/**
 * lexicon.bin (merge/lexicon-file.ts) against a naive sorted term list, and an index of format 4
 * against the same index rewritten as format 3 (the lexicon in index.sqlite): the same answers,
 * the same CIFF bytes, the same merged segments; verify names damage to lexicon.bin.
 */
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LEXICON_BLOCK_TERMS, LEXICON_FILE, LEXICON_FOOTER_BYTES, LexiconFileWriter } from '../merge/lexicon-file.js';
import { LexiconFileError, LexiconFileReader, type LexiconFileEntry } from '../merge/lexicon-file-reader.js';
import { INDEX_DB, POSTINGS_FILE } from '../merge/index-store.js';
import { writeManifest } from '../merge/manifest.js';
import { mergeSegments } from '../merge/segment-merge.js';
import { verifyIndex } from '../merge/verify.js';
import { buildIndex } from '../src/build.js';
import { exportCiff } from '../src/ciff/ciff.js';
import { openIndex } from '../src/reader.js';
import { readIndexContent } from './helpers/index-files.js';
import { codePointOrder } from './helpers/naive-inversion.js';
import { rewriteAsFormat3 } from './helpers/old-format.js';

const work = mkdtempSync(join(tmpdir(), 'gpuindex-lexicon-file-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
let serial = 0;
const fresh = (name: string): string => join(work, `${name}-${serial++}`);

/** Where postings.bin's first list starts (after its magic). */
const FIRST_LIST = 8;

/** Writes `terms` (in any order) with figures to a lexicon file; returns its path and the naive reference: the entries in code point order. */
function writeLexicon(terms: readonly string[], figures: readonly [number, number, number][]): { path: string; entries: LexiconFileEntry[] } {
  const sorted = [...terms].sort(codePointOrder);
  let offset = FIRST_LIST;
  const entries = sorted.map((term, termId) => {
    const [df, extra, length] = figures[termId % figures.length] ?? [1, 0, 2];
    const e = { term, termId, df, cf: df + extra, offset, length };
    offset += length;
    return e;
  });
  const path = fresh('lexicon');
  const writer = new LexiconFileWriter(path);
  for (const e of entries) writer.add(e.term, e.df, e.cf, e.offset, e.length);
  writer.finish();
  return { path, entries };
}

const scanned = (reader: LexiconFileReader): LexiconFileEntry[] => {
  const out: LexiconFileEntry[] = [];
  reader.scan(FIRST_LIST, (term, termId, df, cf, offset, length) => out.push({ term, termId, df, cf, offset, length }));
  return out;
};

const PREFIXES = ['', 'a', 'pre', 'préfixe', '😀', 'x'.repeat(300), '\u0000'];
/** Terms with much in common: shared prefixes, non-ASCII and astral characters, some long. */
const term = fc.oneof(
  { weight: 4, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 12 }) },
  { weight: 4, arbitrary: fc.tuple(fc.constantFrom(...PREFIXES), fc.string({ unit: fc.constantFrom('a', 'b', 'é', '\u{1F600}', '\u{10FFFF}', 'z', '\u0000'), maxLength: 6 })).map(([p, s]) => p + s).filter((s) => s.length > 0) },
  { weight: 1, arbitrary: fc.tuple(fc.string({ unit: 'binary', maxLength: 3 }), fc.integer({ min: 200, max: 5000 })).map(([s, n]) => s + 'q'.repeat(n)) },
);
const figure = fc.tuple(fc.integer({ min: 1, max: 2 ** 33 }), fc.nat(2 ** 40), fc.integer({ min: 2, max: 2 ** 36 }));

describe('lexicon.bin against a sorted term list', () => {
  it('finds every term at its rank in code point order with its figures, nothing else, and scans them in order (property)', () => {
    fc.assert(
      fc.property(fc.uniqueArray(term, { maxLength: 4 * LEXICON_BLOCK_TERMS + 3, size: 'max' }), fc.array(figure, { minLength: 1, maxLength: 20 }), fc.array(term, { maxLength: 20 }), (terms, figures, probes) => {
        const { path, entries } = writeLexicon(terms, figures);
        const reader = new LexiconFileReader(path);
        try {
          expect(reader.terms).toBe(entries.length);
          expect(reader.blocks).toBe(Math.ceil(entries.length / LEXICON_BLOCK_TERMS));
          for (const e of entries) expect(reader.lookup(e.term)).toEqual(e);
          // Absent terms: random ones, and each term's neighbours in byte order (a prefix, one longer).
          const present = new Set(terms);
          const absent = [...probes, ...terms.flatMap((t) => [t.slice(0, -1), t + '\u0000', t + 'a', '\u0000' + t])].filter((t) => !present.has(t));
          for (const t of absent) expect(reader.lookup(t), JSON.stringify(t)).toBeUndefined();
          expect(scanned(reader)).toEqual(entries);
          expect(reader.postingsEnd).toBe(entries.length ? entries.at(-1)!.offset + entries.at(-1)!.length : FIRST_LIST);
        } finally {
          reader.close();
          rmSync(path);
        }
      }),
      // Shrinking hundreds of terms, some thousands of characters long, takes minutes: the first failure is reported as found.
      { numRuns: 150, endOnFailure: true },
    );
  });

  it('refuses terms out of code point order or repeated, lists not back to back, and cf below df', () => {
    const writer = () => {
      const w = new LexiconFileWriter(fresh('refused'));
      w.add('b', 1, 1, 8, 2);
      return w;
    };
    expect(() => writer().add('a', 1, 1, 10, 2)).toThrow(/^lexicon: termID 1 \("a"\) does not follow "b" in code point order$/);
    expect(() => writer().add('b', 1, 1, 10, 2)).toThrow(/^lexicon: termID 1 \("b"\) does not follow "b" in code point order$/);
    // U+FFFF sorts before an astral character in code point order, after it in UTF-16 order.
    const astral = new LexiconFileWriter(fresh('refused'));
    astral.add('\u{1F600}', 1, 1, 8, 2);
    expect(() => astral.add('\uffff', 1, 1, 10, 2)).toThrow(/does not follow/);
    expect(() => writer().add('c', 1, 1, 11, 2)).toThrow(/^lexicon: termID 1's list starts at 11, not where the previous one ends \(10\)$/);
    expect(() => writer().add('c', 3, 2, 10, 6)).toThrow(/^lexicon: termID 1 has cf 2 below its df 3$/);
  });

  it('names the damage: a short file, bad magic, a footer that does not fit, a block out of place', () => {
    const { path } = writeLexicon(Array.from({ length: 3 * LEXICON_BLOCK_TERMS }, (_, i) => `term${String(i).padStart(4, '0')}`), [[1, 0, 2]]);
    const bytes = readFileSync(path);
    const damaged = (change: (b: Buffer) => Buffer): (() => void) => {
      const p = fresh('damaged');
      writeFileSync(p, change(Buffer.from(bytes)));
      return () => {
        const r = new LexiconFileReader(p);
        try {
          r.lookup('term0100');
          scanned(r);
        } finally {
          r.close();
        }
      };
    };
    const at = (p: string) => p.replaceAll('/', '\\/');
    expect(damaged((b) => b.subarray(0, 20))).toThrow(/: 20 bytes, too short for a lexicon$/);
    expect(damaged((b) => (b.write('X', 0), b))).toThrow(/: bad magic at offset 0$/);
    expect(damaged((b) => b.subarray(0, b.length - 1))).toThrow(/: bad footer magic at offset \d+$/);
    // The footer's term count one more: a block too many for it, or its sections past the file.
    expect(damaged((b) => (b.writeBigUInt64LE(BigInt(3 * LEXICON_BLOCK_TERMS + 1), b.length - LEXICON_FOOTER_BYTES), b))).toThrow(/: 3 blocks for 193 terms$/);
    // Block 1's first term made smaller than block 0's last: out of order (and not its key).
    // A block's first term is whole (nothing shared): its first bytes in the file are block 1's start.
    const block1 = bytes.indexOf('term0064');
    expect(damaged((b) => (b[block1] = 0x21, b))).toThrow(new RegExp(`^${at(work)}.*: block 1 \\(at \\d+\\): termID 64 \\("!erm0064"\\) does not follow termID 63 in code point order$`));
    // Block 2's first entry claims a shared prefix.
    const block2 = bytes.indexOf('term0128') - 2;
    expect(damaged((b) => (b[block2] = 3, b))).toThrow(/: block 2 \(at \d+\): termID 128: the term shares 3 bytes with nothing \(the first of a block\)$/);
    expect(damaged((b) => b.subarray(0, 20))).toThrow(LexiconFileError);
  });
});

describe('an index of format 4 and the same index as format 3', () => {
  const four = join(work, 'four');
  const three = join(work, 'three');
  beforeAll(async () => {
    await buildIndex({ input: 'corpus-samples', output: four, sorter: 'cpu', workers: 1 });
    cpSync(four, three, { recursive: true });
    rewriteAsFormat3(three);
  });

  it('verify accepts both, with the same figures', () => {
    const a = verifyIndex(four);
    const b = verifyIndex(three);
    expect(a.terms).toBeGreaterThan(10 * LEXICON_BLOCK_TERMS);
    expect({ ...a, files: 0 }).toEqual({ ...b, files: 0 });
    expect(a.files).toBe(b.files + 1);
  });

  it('both give the same lexicon, lookups, postings and hits', () => {
    const a = openIndex(four);
    const b = openIndex(three);
    try {
      const lexicon = [...a.lexicon()];
      expect(lexicon).toEqual([...b.lexicon()]);
      expect(lexicon.map((e) => e.termId)).toEqual(lexicon.map((_, i) => i));
      for (const e of lexicon.filter((_, i) => i % 7 === 0)) {
        expect(a.lexiconEntry(e.term)).toEqual(e);
        expect(b.lexiconEntry(e.term)).toEqual(e);
      }
      for (const t of ['', 'zzzzzz', 'whale\u0000', '\u{10FFFF}']) {
        expect(a.lexiconEntry(t)).toBeUndefined();
        expect(b.lexiconEntry(t)).toBeUndefined();
      }
      for (const q of ['whale', 'white whale ahab', '+sea -ship', 'postgresql index', 'nothinglikethis']) expect(a.search(q, { k: 20 })).toEqual(b.search(q, { k: 20 }));
      expect(a.stats()).toEqual({ ...b.stats(), formatVersion: 4 });
    } finally {
      a.close();
      b.close();
    }
  });

  it('CIFF export writes the same bytes from either', () => {
    const ciff = (dir: string) => {
      const reader = openIndex(dir);
      const path = fresh('export') + '.ciff';
      try {
        exportCiff(reader, path, 'lexicon formats');
        return readFileSync(path);
      } finally {
        reader.close();
      }
    };
    expect(ciff(four).equals(ciff(three))).toBe(true);
  });

  it('a segment merge of either writes the same index (lexicon.bin byte for byte)', () => {
    const merged = (dirs: string[]) => {
      const out = fresh('merged');
      mkdirSync(out);
      mergeSegments(dirs.map((dir) => ({ dir })), out, {});
      return out;
    };
    const fromFour = merged([four, four]);
    const fromMixed = merged([three, four]);
    expect(readIndexContent(fromMixed)).toEqual(readIndexContent(fromFour));
    expect(verifyIndex(fromMixed).terms).toBe(verifyIndex(four).terms);
  });

  it('a format-4 index without lexicon.bin: one line from the reader and from verify', () => {
    const dir = fresh('no-lexicon');
    cpSync(four, dir, { recursive: true });
    rmSync(join(dir, LEXICON_FILE));
    expect(() => openIndex(dir)).toThrow(new RegExp(`^${join(dir, LEXICON_FILE).replaceAll('/', '\\/')} is missing \\(index format 4 keeps its lexicon there\\)$`));
    expect(() => verifyIndex(dir)).toThrow(/^lexicon\.bin is missing$/);
    writeManifest(dir, [INDEX_DB, POSTINGS_FILE], 4);
    expect(() => verifyIndex(dir)).toThrow(/^lexicon\.bin is missing$/);
  });

  it('verify names damage to lexicon.bin even when the checksums were recomputed', () => {
    const bytes = readFileSync(join(four, LEXICON_FILE));
    const tampered = (change: (b: Buffer) => void): string => {
      const dir = fresh('tampered');
      cpSync(four, dir, { recursive: true });
      const b = Buffer.from(bytes);
      change(b);
      writeFileSync(join(dir, LEXICON_FILE), b);
      writeManifest(dir, [INDEX_DB, POSTINGS_FILE], 4);
      return dir;
    };
    const footer = bytes.length - LEXICON_FOOTER_BYTES;
    const blocks = Number(bytes.readBigUInt64LE(footer + 8));
    const keysStart = Number(bytes.readBigUInt64LE(footer + 16));
    const indexStart = Number(bytes.readBigUInt64LE(footer + 24));
    expect(() => verifyIndex(tampered((b) => b.write('X', 0)))).toThrow(/^lexicon\.bin: bad magic at offset 0$/);
    // Any byte of the keys, the block index or the footer changed.
    fc.assert(
      fc.property(fc.integer({ min: keysStart, max: bytes.length - 1 }), fc.integer({ min: 1, max: 255 }), (at, xor) => {
        const dir = tampered((b) => (b[at] = b[at]! ^ xor));
        expect(() => verifyIndex(dir)).toThrow(/^(lexicon\.bin: |stats: terms = |term ")/);
        rmSync(dir, { recursive: true });
      }),
      { numRuns: 40 },
    );
    expect(blocks).toBe(Math.ceil(verifyIndex(four).terms / LEXICON_BLOCK_TERMS));
    expect(indexStart).toBeGreaterThan(keysStart);
    // Block 0's first entry: shared 0, its length, the term, then df: a df changed, the list no longer checks out.
    const firstLength = bytes[9]!;
    expect(() => verifyIndex(tampered((b) => (b[10 + firstLength] = b[10 + firstLength]! + 1)))).toThrow(/^(term ".*" \(termID 0\): |lexicon\.bin: block 0 )/);
  });
});
