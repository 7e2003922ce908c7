/**
 * One segment's files, read: a one-segment index folder (postings.bin, index.sqlite), as
 * `gpuindex build` writes it. The segment merge reads its inputs through this, and the index
 * reader each of an index's segments.
 */
import { closeSync, existsSync, fstatSync, openSync, statSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { hasWarcColumns, INDEX_DB, POSTINGS_FILE, READABLE_INDEX_FORMATS, readableFormats, type CollectionStats } from './index-store.js';
import { openLexicon, type Lexicon, type SegmentFigures } from './lexicon-reader.js';
import { readFullAt } from '../runtime/read-at.js';
import { SegmentFormatError } from './segment-format-error.js';

export type { SegmentFigures } from './lexicon-reader.js';

/** Bytes read at a time when postings.bin is not held whole. */
const WINDOW_BYTES = 1 << 20;

/** SegmentReader.joinedRows: count, smallest and largest docID, and each column joined by U+0000 (null: no row). */
export type JoinedRows = [count: number, min: number | null, max: number | null, ids: string | null, paths: string | null];

export { SegmentFormatError } from './segment-format-error.js';

/** SQLite's codes for a file that is not a database or is damaged (better-sqlite3 sets `code`). */
const SQLITE_DAMAGED = /^SQLITE_(CORRUPT|NOTADB)/;

/** `err` as a SegmentFormatError naming `path` when SQLite found the file damaged; else `err`. */
function damaged(path: string, err: unknown): unknown {
  const code = (err as { code?: unknown })?.code;
  if (typeof code === 'string' && SQLITE_DAMAGED.test(code)) return new SegmentFormatError(`${path}: damaged (${(err as Error).message}); run \`gpuindex verify\` on the index`);
  return err;
}

/** Which file a path names now (device and inode): a folder replaced under the same name is another segment. */
export function fileIdentity(path: string): string {
  const st = statSync(path);
  return `${st.dev}:${st.ino}`;
}

export class SegmentReader {
  /** fileIdentity of its index.sqlite when opened. */
  readonly identity: string;
  readonly db: Database.Database;
  private readonly fd: number;
  readonly stats: CollectionStats;
  readonly settings: Record<string, unknown>;
  /** The segment's terms and their figures (lexicon-reader.ts). */
  readonly lexicon: Lexicon;

  constructor(readonly dir: string) {
    const dbPath = join(dir, INDEX_DB);
    if (!existsSync(dbPath) || !existsSync(join(dir, POSTINGS_FILE))) throw new SegmentFormatError(`not a gpuindex index: ${dir}`);
    this.db = new Database(dbPath, { readonly: true, fileMustExist: true });
    try {
      this.stats = Object.fromEntries(
        (this.db.prepare('SELECT key, value FROM stats').all() as { key: string; value: number }[]).map((r) => [r.key, r.value]),
      ) as unknown as CollectionStats;
      this.settings = Object.fromEntries(
        (this.db.prepare('SELECT key, value FROM settings').all() as { key: string; value: unknown }[]).map((r) => [r.key, parseSetting(r.value)]),
      );
    } catch (err) {
      this.db.close();
      throw damaged(dbPath, err);
    }
    this.identity = fileIdentity(dbPath);
    this.fd = openSync(join(dir, POSTINGS_FILE), 'r');
    if (!READABLE_INDEX_FORMATS.includes(this.stats.formatVersion)) {
      this.close();
      throw new SegmentFormatError(`${dir}: index format ${this.stats.formatVersion ?? '?'}, this gpuindex reads formats ${readableFormats()}: build the index again`);
    }
    try {
      this.lexicon = openLexicon(dir, this.db, this.stats.formatVersion, this.stats.terms);
    } catch (err) {
      this.close();
      throw new SegmentFormatError((err as Error).message);
    }
  }

  /** Every term's string in termID order. */
  termsInIdOrder(): string[] {
    return this.lexicon.termsInIdOrder();
  }

  /** Every term in code point order, with its termID (ids undefined: the position is the termID). */
  termsInTermOrder(): { terms: string[]; ids?: Uint32Array } {
    return this.lexicon.termsInTermOrder();
  }

  /** The figures of every term (32 bytes a term). */
  figures(): SegmentFigures {
    return this.lexicon.figures();
  }

  /** postings.bin whole, once loadPostings() read it; else a window of it (see readListBytes). */
  private postings?: Uint8Array;
  private window = new Uint8Array(0);
  private windowStart = 0;
  /** What locate() found a list in: postings.bin whole, or the window. */
  view: Uint8Array = this.window;

  /** Reads postings.bin into memory: a merge then reads its lists without a system call each. */
  loadPostings(): void {
    const size = fstatSync(this.fd).size;
    const all = new Uint8Array(size);
    this.readAt(all, 0, size, 0);
    this.postings = all;
    this.view = all;
  }

  /** The encoded bytes of one postings list, read for one use (into `into` when given: a view of it is returned). */
  readListBytes(offset: number, length: number, into?: ListArena): Uint8Array {
    const list = into ? into.take(length) : new Uint8Array(length);
    this.readAt(list, 0, length, offset);
    return list;
  }

  /**
   * Where one postings list starts in `view`, for a reader that goes through the file in about
   * its order, as a merge does: postings.bin whole (loadPostings), or a window of WINDOW_BYTES
   * from the list's start, so lists read in file order cost a system call a window, not one
   * each. No view is made: a merge of many short lists spent more on views than on bytes.
   */
  locate(offset: number, length: number): number {
    if (this.postings) {
      if (offset + length > this.postings.length) throw new SegmentFormatError(`${this.dir}: postings.bin is shorter than the lexicon says`);
      return offset;
    }
    if (offset < this.windowStart || offset + length > this.windowStart + this.window.length) {
      const want = Math.max(length, WINDOW_BYTES);
      if (this.window.buffer.byteLength < want) this.window = new Uint8Array(want);
      const size = fstatSync(this.fd).size;
      const got = Math.min(want, Math.max(0, size - offset));
      if (got < length) throw new SegmentFormatError(`${this.dir}: postings.bin is shorter than the lexicon says`);
      this.window = new Uint8Array(this.window.buffer, 0, got);
      this.readAt(this.window, 0, got, offset);
      this.windowStart = offset;
      this.view = this.window;
    }
    return offset - this.windowStart;
  }

  private readAt(into: Uint8Array, at: number, length: number, position: number): void {
    if (readFullAt(this.fd, into.subarray(at, at + length), position) < length) throw new SegmentFormatError(`${this.dir}: postings.bin is shorter than the lexicon says`);
  }

  /** Bytes of postings.bin. */
  get postingsBytes(): number {
    return fstatSync(this.fd).size;
  }

  /** Each document's length (terms), indexed by docID: 4 bytes a document. */
  documentLengths(): Uint32Array {
    // One column into one array: rows through iterate() cost 3.5 µs each, (doc_id, length)
    // pairs 3 µs, this under 1 µs. docIDs run 0 .. N-1 (gpuindex verify checks it).
    try {
      return Uint32Array.from(this.db.prepare('SELECT length FROM docs ORDER BY doc_id').pluck().all() as number[]);
    } catch (err) {
      throw damaged(join(this.dir, INDEX_DB), err);
    }
  }

  /**
   * The documents of docIDs [from, to): their count, smallest and largest docID, and their
   * external ids and paths each joined by U+0000 in docID order (src/query/row-chunks.ts).
   */
  joinedRows(from: number, to: number): JoinedRows {
    this.joinedRowsStmt ??= this.db
      .prepare("SELECT count(*), min(doc_id), max(doc_id), group_concat(external_id, char(0) ORDER BY doc_id), group_concat(path, char(0) ORDER BY doc_id) FROM docs WHERE doc_id >= ? AND doc_id < ?")
      .raw();
    try {
      return this.joinedRowsStmt.get(from, to) as JoinedRows;
    } catch (err) {
      throw damaged(join(this.dir, INDEX_DB), err);
    }
  }
  private joinedRowsStmt?: Database.Statement;

  /** Document rows in docID order: [docId, externalId, path, length, WARC-Date, WARC-Record-ID] (NULLs for other documents). */
  *documentRows(): Generator<[number, string, string, number, string | null, string | null]> {
    const warc = hasWarcColumns(this.db) ? 'warc_date, warc_record_id' : 'NULL, NULL';
    yield* this.db.prepare(`SELECT doc_id, external_id, path, length, ${warc} FROM docs ORDER BY doc_id`).raw().iterate() as Iterable<[number, string, string, number, string | null, string | null]>;
  }

  private refs = 1;

  /** One more user of these open files (a reopened reader sharing the segment); each one closes. */
  retain(): this {
    this.refs++;
    return this;
  }

  /** Closes the files once every user has closed. */
  close(): void {
    if (--this.refs > 0) return;
    if (this.db.open) {
      this.lexicon?.close();
      this.db.close();
      closeSync(this.fd);
    }
  }
}

/**
 * Room for the lists one query reads, reused from query to query (reset() at each): a query of
 * frequent terms reads megabytes, which as fresh arrays cost a garbage collection every few
 * queries. Views taken before a reset stay valid until the next one overwrites them.
 */
export class ListArena {
  private buf = new Uint8Array(1 << 20);
  private used = 0;

  reset(): void {
    this.used = 0;
  }

  take(length: number): Uint8Array {
    if (this.used + length > this.buf.length) {
      // Views of the old buffer, taken earlier in this query, keep it alive until the query ends.
      this.buf = new Uint8Array(Math.max(this.buf.length * 2, length * 2));
      this.used = 0;
    }
    const view = this.buf.subarray(this.used, this.used + length);
    this.used += length;
    return view;
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
