/**
 * One segment's files, read: a one-segment index folder (postings.bin, index.sqlite), as
 * `gpuindex build` writes it. The segment merge reads its inputs through this, and the index
 * reader each of an index's segments.
 */
import { closeSync, existsSync, openSync, readSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { INDEX_DB, INDEX_FORMAT_VERSION, POSTINGS_FILE, type CollectionStats } from './index-store.js';
import { TermStatsReader } from './term-stats.js';

/** The lexicon's figures of every term of a segment, indexed by termID. */
export interface SegmentFigures {
  df: Float64Array;
  cf: Float64Array;
  offset: Float64Array;
  length: Float64Array;
}

/** Why a folder is not a readable segment: thrown as a plain Error; callers word it for the user. */
export class SegmentFormatError extends Error {}

export class SegmentReader {
  readonly db: Database.Database;
  private readonly fd: number;
  readonly stats: CollectionStats;
  readonly settings: Record<string, unknown>;
  readonly termStats: TermStatsReader;

  constructor(readonly dir: string) {
    const dbPath = join(dir, INDEX_DB);
    if (!existsSync(dbPath) || !existsSync(join(dir, POSTINGS_FILE))) throw new SegmentFormatError(`not a gpuindex index: ${dir}`);
    this.db = new Database(dbPath, { readonly: true, fileMustExist: true });
    this.fd = openSync(join(dir, POSTINGS_FILE), 'r');
    this.stats = Object.fromEntries(
      (this.db.prepare('SELECT key, value FROM stats').all() as { key: string; value: number }[]).map((r) => [r.key, r.value]),
    ) as unknown as CollectionStats;
    this.settings = Object.fromEntries(
      (this.db.prepare('SELECT key, value FROM settings').all() as { key: string; value: unknown }[]).map((r) => [r.key, parseSetting(r.value)]),
    );
    if (this.stats.formatVersion !== INDEX_FORMAT_VERSION) {
      this.close();
      throw new SegmentFormatError(`${dir}: index format ${this.stats.formatVersion ?? '?'}, this gpuindex reads format ${INDEX_FORMAT_VERSION}: build the index again`);
    }
    this.termStats = new TermStatsReader(this.db);
  }

  /** Every term's string in termID order. */
  *termsInIdOrder(): Generator<string> {
    yield* this.db.prepare('SELECT term FROM terms ORDER BY term_id').pluck().iterate() as Iterable<string>;
  }

  /** The figures of every term (32 bytes a term). */
  figures(): SegmentFigures {
    const n = this.stats.terms;
    const f: SegmentFigures = { df: new Float64Array(n), cf: new Float64Array(n), offset: new Float64Array(n), length: new Float64Array(n) };
    for (const c of this.termStats.chunks()) {
      if (c.firstTermId + c.df.length > n) throw new Error(`${this.dir}: index.sqlite has figures for termIDs past its ${n} terms`);
      f.df.set(c.df, c.firstTermId);
      f.cf.set(c.cf, c.firstTermId);
      f.offset.set(c.offset, c.firstTermId);
      f.length.set(c.length, c.firstTermId);
    }
    return f;
  }

  /** The encoded bytes of one postings list. */
  readListBytes(offset: number, length: number, into = new Uint8Array(length)): Uint8Array {
    let got = 0;
    while (got < length) {
      const n = readSync(this.fd, into, got, length - got, offset + got);
      if (n === 0) throw new Error(`${this.dir}: postings.bin is shorter than the lexicon says`);
      got += n;
    }
    return into.length === length ? into : into.subarray(0, length);
  }

  /** Document rows in docID order: [docId, externalId, path, length]. */
  *documentRows(): Generator<[number, string, string, number]> {
    yield* this.db.prepare('SELECT doc_id, external_id, path, length FROM docs ORDER BY doc_id').raw().iterate() as Iterable<[number, string, string, number]>;
  }

  close(): void {
    if (this.db.open) {
      this.db.close();
      closeSync(this.fd);
    }
  }
}

export function parseSetting(v: unknown): unknown {
  if (typeof v !== 'string') return v;
  try {
    return JSON.parse(v);
  } catch {
    return v;
  }
}
