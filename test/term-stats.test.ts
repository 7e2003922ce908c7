import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INDEX_DB } from '../merge/index-store.js';
import { writeManifest } from '../merge/manifest.js';
import { TERM_STATS_CHUNK, TERM_STATS_SCHEMA, TermStatsReader, TermStatsWriter } from '../merge/term-stats.js';
import { verifyIndex } from '../merge/verify.js';
import { buildIndex } from '../src/build.js';
import { rewriteAsFormat3 } from './helpers/old-format.js';
import { IndexReader } from '../src/reader.js';

const work = mkdtempSync(join(tmpdir(), 'gpuindex-term-stats-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
let n = 0;

function freshDb(): Database.Database {
  const db = new Database(':memory:');
  db.exec(TERM_STATS_SCHEMA);
  return db;
}

/** Figures of consecutive terms: lists back to back from `start`, cf >= df, values up to 2^40. */
const figures = fc
  .tuple(
    fc.nat(2 ** 40),
    fc.array(fc.tuple(fc.integer({ min: 1, max: 2 ** 33 }), fc.nat(2 ** 40), fc.nat(2 ** 36)), { maxLength: 3 * TERM_STATS_CHUNK + 5 }),
  )
  .map(([start, terms]) => {
    let at = start;
    return terms.map(([df, extra, length]) => {
      const e = { df, cf: df + extra, offset: at, length };
      at += length;
      return e;
    });
  });

describe('term_stats (the lexicon figures in chunks)', () => {
  it('gives back every figure written, one term at a time or all rows in order (property)', () => {
    fc.assert(
      fc.property(figures, (terms) => {
        const db = freshDb();
        const writer = new TermStatsWriter(db);
        terms.forEach((e, t) => writer.add(t, e.df, e.cf, e.offset, e.length));
        writer.flush();
        expect(writer.count).toBe(terms.length);
        const reader = new TermStatsReader(db);
        expect(reader.rowCount()).toBe(Math.ceil(terms.length / TERM_STATS_CHUNK));
        // Backwards, so the few cached rows are reused and evicted.
        for (let t = terms.length - 1; t >= 0; t--) expect(reader.get(t)).toEqual(terms[t]);
        expect(reader.get(terms.length)).toBeUndefined();
        const all = [...reader.chunks()].flatMap((c) => Array.from(c.df, (df, i) => ({ df, cf: c.cf[i], offset: c.offset[i], length: c.length[i] })));
        expect(all).toEqual(terms);
        db.close();
      }),
      { numRuns: 60 },
    );
  });

  it('addAll writes the rows add() writes, from arrays indexed by termID (property)', () => {
    fc.assert(
      fc.property(figures, fc.nat(), (terms, cut) => {
        const rowsOf = (fill: (w: TermStatsWriter) => void) => {
          const db = freshDb();
          const writer = new TermStatsWriter(db);
          fill(writer);
          writer.flush();
          const rows = db.prepare('SELECT * FROM term_stats ORDER BY first_term_id').raw().all();
          db.close();
          return rows;
        };
        const col = (k: 'df' | 'cf' | 'offset' | 'length') => terms.map((e) => e[k]);
        // Some terms one at a time, then the rest at once.
        const k = terms.length === 0 ? 0 : cut % (terms.length + 1);
        const mixed = rowsOf((w) => {
          for (let t = 0; t < k; t++) w.add(t, terms[t]!.df, terms[t]!.cf, terms[t]!.offset, terms[t]!.length);
          w.addAll(terms.length - k, col('df'), col('cf'), col('offset'), col('length'));
          expect(w.count).toBe(terms.length);
        });
        expect(mixed).toEqual(rowsOf((w) => terms.forEach((e, t) => w.add(t, e.df, e.cf, e.offset, e.length))));
      }),
      { numRuns: 60 },
    );
    const writer = new TermStatsWriter(freshDb());
    expect(() => writer.addAll(2, [1, 1], [1, 1], [8, 11], [2, 2])).toThrow(/^lexicon: termID 1's list starts at 11, not where the previous one ends \(10\)$/);
    expect(() => new TermStatsWriter(freshDb()).addAll(1, [3], [2], [8], [6])).toThrow(/^lexicon: termID 0 has cf 2 below its df 3$/);
  });

  it('refuses figures out of termID order, lists that do not follow each other, and cf below df', () => {
    const writer = new TermStatsWriter(freshDb());
    writer.add(0, 1, 1, 8, 2);
    expect(() => writer.add(2, 1, 1, 10, 2)).toThrow(/^lexicon: termID 2 after 0 \(termIDs must come in order, without gaps\)$/);
    expect(() => writer.add(1, 1, 1, 11, 2)).toThrow(/^lexicon: termID 1's list starts at 11, not where the previous one ends \(10\)$/);
    expect(() => writer.add(1, 3, 2, 10, 6)).toThrow(/^lexicon: termID 1 has cf 2 below its df 3$/);
  });
});

describe('index.sqlite with term_stats (format 3), read back and verified', () => {
  const good = join(work, 'good');
  beforeAll(async () => {
    await buildIndex({ input: 'corpus-samples', output: good, sorter: 'cpu', workers: 1 });
    rewriteAsFormat3(good);
  });
  const copy = () => {
    const dir = join(work, `copy-${n++}`);
    cpSync(good, dir, { recursive: true });
    return dir;
  };
  /** Changes index.sqlite with `sql` and writes a manifest that matches it, as a careless tool would. */
  const tamper = (change: string | ((db: Database.Database) => void)) => {
    const dir = copy();
    const db = new Database(join(dir, INDEX_DB));
    if (typeof change === 'string') db.exec(change);
    else change(db);
    db.close();
    writeManifest(dir, ['index.sqlite', 'postings.bin'], 2);
    return dir;
  };

  it('holds one row per 256 terms, and the reader finds each term with its figures', () => {
    const reader = new IndexReader(good);
    try {
      const terms = reader.stats().terms;
      expect(terms).toBeGreaterThan(TERM_STATS_CHUNK);
      const db = new Database(join(good, INDEX_DB), { readonly: true });
      expect(db.prepare('SELECT COUNT(*) FROM term_stats').pluck().get()).toBe(Math.ceil(terms / TERM_STATS_CHUNK));
      db.close();
      // Lists back to back in termID order, and each entry's figures decode its list.
      const entries = [...reader.lexicon()].sort((a, b) => a.termId - b.termId);
      expect(entries.map((e) => e.termId)).toEqual(Array.from({ length: terms }, (_, t) => t));
      for (let t = 1; t < terms; t++) expect(entries[t]!.offset).toBe(entries[t - 1]!.offset + entries[t - 1]!.length);
      for (const e of entries.filter((_, i) => i % 97 === 0)) {
        expect(reader.lexiconEntry(e.term)).toEqual(e);
        const list = reader.readList(e);
        expect(list.docIds.length).toBe(e.df);
        expect(list.tfs.reduce((a, b) => a + b, 0)).toBe(e.cf);
      }
    } finally {
      reader.close();
    }
  });

  it('verify names the damage in term_stats even when the checksums were recomputed', () => {
    expect(() => verifyIndex(tamper('DELETE FROM term_stats WHERE first_term_id = 256'))).toThrow(/^term_stats: \d+ rows for \d+ terms \(256 a row\)$/);
    const trailingByte = (db: Database.Database) => {
      const blob = db.prepare('SELECT stats FROM term_stats WHERE first_term_id = 0').pluck().get() as Buffer;
      db.prepare('UPDATE term_stats SET stats = ? WHERE first_term_id = 0').run(Buffer.concat([blob, Buffer.from([0])]));
    };
    expect(() => verifyIndex(tamper(trailingByte))).toThrow(/^term_stats: term_stats row 0: 1 bytes after its 256 terms$/);
    expect(() => verifyIndex(tamper('UPDATE term_stats SET first_offset = first_offset + 1 WHERE first_term_id = 256'))).toThrow(
      /^term ".+" \(termID 256\): list at \d+, the previous list ends at \d+$/,
    );
    expect(() => verifyIndex(tamper('DELETE FROM terms WHERE term_id = 7'))).toThrow(/^terms: termIDs are not 0 \.\. \d+ \(found 0 \.\. \d+\)$/);
  });

  it('an index of format 1 gets a one-line error from the reader and from verify', () => {
    const dir = tamper("UPDATE stats SET value = 1 WHERE key = 'formatVersion'");
    expect(() => new IndexReader(dir)).toThrow(new RegExp(`^${dir.replaceAll('/', '\\/')}: index format 1, this gpuindex reads formats 2, 3 and 4: build the index again$`));
    expect(() => verifyIndex(dir)).toThrow(/^stats: index format 1, this gpuindex reads formats 2, 3 and 4: build the index again$/);
  });
});
