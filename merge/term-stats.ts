/**
 * The lexicon's per-term figures (df, cf, and where the term's list lies in postings.bin) in
 * index.sqlite's `term_stats` table: one row per TERM_STATS_CHUNK consecutive termIDs, holding
 * the first term's offset and, for each term, varint(df), varint(cf - df), varint(length).
 * Lists lie in postings.bin in termID order, back to back, so a term's offset is its chunk's
 * first offset plus the lengths before it.
 *
 * Why not columns of the `terms` rows: the terms table's rows (term_id, term) go in while the
 * parse runs (merge/rows-ahead.ts), long before these figures are known, and writing them as
 * 109,064 rows of four columns after the parse took mail's build ~75 ms of its ~150 ms tail,
 * against ~2 ms as 427 chunk rows (2-core machine).
 */
import type Database from 'better-sqlite3';
import { readVarint, writeVarint } from './varint.js';

/** TermIDs per term_stats row: a row's blob (~1.3 KB on mail) stays inside one 4 KB page. */
export const TERM_STATS_CHUNK = 256;

export const TERM_STATS_SCHEMA = 'CREATE TABLE term_stats (first_term_id INTEGER PRIMARY KEY, first_offset INTEGER NOT NULL, terms INTEGER NOT NULL, stats BLOB NOT NULL)';

export interface TermStats {
  df: number;
  cf: number;
  offset: number;
  length: number;
}

/** Encodes the figures of consecutive termIDs, given in termID order, into term_stats rows. */
export class TermStatsWriter {
  private readonly insert: Database.Statement;
  private buf = new Uint8Array(TERM_STATS_CHUNK * 30);
  private used = 0;
  private inChunk = 0;
  private firstTermId = 0;
  private firstOffset = 0;
  /** The termID the next add() must be for, and where its list must start. */
  private nextTermId = 0;
  private nextOffset = -1;

  constructor(db: Database.Database) {
    this.insert = db.prepare('INSERT INTO term_stats (first_term_id, first_offset, terms, stats) VALUES (?, ?, ?, ?)');
  }

  /** Terms added so far. */
  get count(): number {
    return this.nextTermId;
  }

  add(termId: number, df: number, cf: number, offset: number, length: number): void {
    if (termId !== this.nextTermId) throw new Error(`lexicon: termID ${termId} after ${this.nextTermId - 1} (termIDs must come in order, without gaps)`);
    this.put(termId, df, cf, offset, length);
  }

  /**
   * add() for terms nextTermId .. nextTermId + n - 1 at once, from arrays indexed by termID
   * (a tally's lexicon: merge/postings-tally.ts): one loop instead of a call and its checks per
   * term, which ran cold on the main thread after the parse (mail: 109 K terms, 13-25 ms).
   */
  addAll(n: number, df: ArrayLike<number>, cf: ArrayLike<number>, offsets: ArrayLike<number>, lengths: ArrayLike<number>): void {
    for (let t = this.nextTermId, end = t + n; t < end; t++) this.put(t, df[t]!, cf[t]!, offsets[t]!, lengths[t]!);
  }

  /** Checks and encodes the figures of termID nextTermId (`termId`). */
  private put(termId: number, df: number, cf: number, offset: number, length: number): void {
    if (this.nextOffset >= 0 && offset !== this.nextOffset) throw new Error(`lexicon: termID ${termId}'s list starts at ${offset}, not where the previous one ends (${this.nextOffset})`);
    if (cf < df) throw new Error(`lexicon: termID ${termId} has cf ${cf} below its df ${df}`);
    if (this.inChunk === 0) {
      this.firstTermId = termId;
      this.firstOffset = offset;
    }
    let p = writeVarint(this.buf, this.used, df);
    p = writeVarint(this.buf, p, cf - df);
    this.used = writeVarint(this.buf, p, length);
    this.nextTermId = termId + 1;
    this.nextOffset = offset + length;
    if (++this.inChunk === TERM_STATS_CHUNK) this.flush();
  }

  /** Writes the last, partial chunk. */
  flush(): void {
    if (this.inChunk === 0) return;
    this.insert.run(this.firstTermId, this.firstOffset, this.inChunk, this.buf.subarray(0, this.used));
    this.used = 0;
    this.inChunk = 0;
  }
}

/** One decoded term_stats row. */
export interface TermStatsChunk {
  firstTermId: number;
  df: Float64Array;
  cf: Float64Array;
  offset: Float64Array;
  length: Float64Array;
}

interface ChunkRow {
  first_term_id: number;
  first_offset: number;
  terms: number;
  stats: Buffer;
}

/** Decodes a term_stats row; throws on a blob that does not hold exactly its terms' figures. */
export function decodeTermStatsChunk(row: ChunkRow): TermStatsChunk {
  const n = row.terms;
  const chunk: TermStatsChunk = { firstTermId: row.first_term_id, df: new Float64Array(n), cf: new Float64Array(n), offset: new Float64Array(n), length: new Float64Array(n) };
  const bytes = row.stats;
  let pos = 0;
  let at = row.first_offset;
  let v: number;
  for (let i = 0; i < n; i++) {
    [v, pos] = readVarint(bytes, pos);
    chunk.df[i] = v;
    [v, pos] = readVarint(bytes, pos);
    chunk.cf[i] = chunk.df[i]! + v;
    [v, pos] = readVarint(bytes, pos);
    chunk.length[i] = v;
    chunk.offset[i] = at;
    at += v;
  }
  if (pos !== bytes.length) throw new RangeError(`term_stats row ${row.first_term_id}: ${bytes.length - pos} bytes after its ${n} terms`);
  return chunk;
}

/** Reads term_stats: one term's figures (a few decoded rows kept), or every row in termID order. */
export class TermStatsReader {
  private readonly rowStmt: Database.Statement;
  private readonly cache = new Map<number, TermStatsChunk>();

  constructor(private readonly db: Database.Database) {
    this.rowStmt = db.prepare('SELECT first_term_id, first_offset, terms, stats FROM term_stats WHERE first_term_id = ?');
  }

  /** The row that starts at `firstTermId`, decoded (not cached), or undefined. */
  chunkAt(firstTermId: number): TermStatsChunk | undefined {
    const row = this.rowStmt.get(firstTermId) as ChunkRow | undefined;
    return row && decodeTermStatsChunk(row);
  }

  /** Rows in the table. */
  rowCount(): number {
    return this.db.prepare('SELECT COUNT(*) FROM term_stats').pluck().get() as number;
  }

  /** The figures of `termId`, or undefined when no row holds it. */
  get(termId: number): TermStats | undefined {
    const first = termId - (termId % TERM_STATS_CHUNK);
    let chunk = this.cache.get(first);
    if (!chunk) {
      chunk = this.chunkAt(first);
      if (!chunk) return undefined;
      if (this.cache.size >= 64) this.cache.delete(this.cache.keys().next().value!);
      this.cache.set(first, chunk);
    }
    const i = termId - first;
    if (i >= chunk.df.length) return undefined;
    return { df: chunk.df[i]!, cf: chunk.cf[i]!, offset: chunk.offset[i]!, length: chunk.length[i]! };
  }

  /** Every row, decoded, in termID order. */
  *chunks(): Generator<TermStatsChunk> {
    for (const row of this.db.prepare('SELECT first_term_id, first_offset, terms, stats FROM term_stats ORDER BY first_term_id').iterate() as Iterable<ChunkRow>) yield decodeTermStatsChunk(row);
  }
}
