/**
 * Reads one crawl file into documents. Never throws for bad input: an unreadable, empty,
 * binary, truncated or malformed file or line becomes a skip item naming the file (and line or
 * element) and the reason, and every good document before the damage (and, for JSONL, after
 * it) is still yielded.
 *
 *  - .jsonl/.ndjson: split into lines on the raw bytes (Buffer.indexOf), each line validated as
 *    UTF-8 and parsed with JSON.parse; a bad line is skipped, the next lines are read.
 *  - .json: an array is streamed element by element with stream-json, so a multi-GB array
 *    never sits in memory; anything else is one document (read whole, like .html and .txt).
 *    stream-json cannot resynchronise after a syntax error, so a broken element ends the file:
 *    the elements before it are indexed, one skip item names the element index and the rest
 *    of the file is not read.
 *  - .html/.htm: visible text and <title> (html.ts); .txt: the file is the text; .md: the text,
 *    with the first heading as title (after YAML front matter, which is not indexed).
 *  - .warc, .warc.gz, .warc.wet.gz: a document per HTML or text record (warc.ts).
 *  - .gz of each: decompressed on the fly; a corrupt or truncated stream is a skip item, and
 *    every document inflated whole before the damage stays, whatever the file's size (a JSONL
 *    line the damage cuts is not one; a whole-file document is skipped).
 */
import { isUtf8 } from 'node:buffer';
import { closeSync, createReadStream, openSync, readFileSync, readSync, statSync, type Stats } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { createRequire } from 'node:module';
import { pipeline, Readable } from 'node:stream';
import { constants as zlibConstants, createGunzip } from 'node:zlib';
import { decodeFile, decodeTextFile, hasNulByte } from './decode.js';
import { documentFromJson, resolveFields, type ResolvedFields } from './fields.js';
import { formatOf, type CorpusFormat } from './formats.js';
import { readHtmlPage, readHtmlPageInverted, type PageRead, type Utf8TextInverter } from './html.js';
import { UNSUPPORTED_TYPE } from './unsupported.js';
import { readWarc } from './warc.js';
import type { CorpusItem, CorpusOptions, JsonlLineHandler, SourceDocument } from './types.js';

/** Longest JSONL line, and largest whole-file document (.html, .txt, .md, single .json), in bytes. */
export const MAX_LINE_BYTES = 256 * 2 ** 20;
export const MAX_WHOLE_FILE_BYTES = 256 * 2 ** 20;
/** stream-json is fed in slices of this size (it is fastest on small ones). */
const JSON_SLICE_BYTES = 16 * 1024;
const READ_CHUNK_BYTES = 1 << 20;
/**
 * Plain files up to this size are read with one synchronous call: a crawl of many small files
 * is otherwise dominated by the event-loop round trips of open/stat/read/close.
 */
const SMALL_FILE_BYTES = 4 << 20;

/**
 * Reads the file `relPath` ('/'-separated, relative to `root`). `lineHandler` may take JSONL
 * lines instead of JSON.parse (see JsonlLineHandler).
 */
export async function* readCorpusFile(root: string, relPath: string, options: CorpusOptions = {}, range?: LineRange, lineHandler?: JsonlLineHandler, inverters?: BytesInverters): AsyncGenerator<CorpusItem> {
  yield* readFileWith(root, relPath, resolveFields(options), range, lineHandler, inverters);
}

/** Byte offsets [start, end) of a file (end may be Infinity: to the end). */
export interface ByteRange {
  start: number;
  end: number;
}

/**
 * A part of an uncompressed JSONL file for one parse task: the lines that start at a byte
 * offset in [start, end). Line numbers (and ids made from them) are counted from the range's
 * first line; `onEnd` gets the range's line and item counts so the caller can number lines
 * across ranges (indexer/jsonl-ranges.ts).
 */
export interface LineRange extends ByteRange {
  onEnd?: (counts: { lines: number; items: number }) => void;
}

/** readCorpusFile with the field lists already resolved. */
export async function* readFileWith(root: string, relPath: string, fields: ResolvedFields, range?: LineRange, lineHandler?: JsonlLineHandler, inverters?: BytesInverters): AsyncGenerator<CorpusItem> {
  const path = relPath;
  const skip = (reason: string): CorpusItem => ({ kind: 'skip', skip: { path, reason } });
  const fmt = formatOf(relPath);
  if (!fmt) return yield skip(UNSUPPORTED_TYPE);
  let full = join(root, relPath);
  let st: Stats;
  try {
    st = statSync(full);
  } catch (err) {
    // A crawl that is one file: its listing names the file relative to its folder, but callers
    // may pass the file itself as the root.
    if (codeOf(err) !== 'ENOTDIR' || basename(root) !== relPath) return yield skip(describeError(err));
    try {
      st = statSync(root);
      full = root;
    } catch (err2) {
      return yield skip(describeError(err2));
    }
  }
  if (!st.isFile()) return yield skip('not a regular file');
  if (st.size === 0) return yield skip('empty file');
  try {
    if (fmt.format === 'jsonl') yield* readJsonl(full, path, fmt.gzip, fields, st.size, range, lineHandler);
    else if (fmt.format === 'json') yield* readJson(full, path, fmt.gzip, fields, st.size);
    else if (fmt.format === 'warc') yield* readWarc(full, path, fmt.gzip, st.size, (d) => doc(d.doc), range, inverters);
    else yield* readWholeDocument(full, path, fmt.gzip, fmt.format, st.size);
  } catch (err) {
    yield skip(describeError(err));
  }
}

// ---------------------------------------------------------------------------------------------

/** A file's bytes as chunks, read in order; destroy() stops the read. */
interface Chunks extends AsyncIterable<Buffer> {
  destroy(): void;
}

/** The file's (decompressed) bytes as a stream of chunks. Throws at once if a small file cannot be read. */
function openStream(full: string, gzip: boolean, size: number, from = 0): Chunks {
  if (from > 0) return createReadStream(full, { start: from, highWaterMark: READ_CHUNK_BYTES }); // a range: never gzip
  if (size <= SMALL_FILE_BYTES) {
    const buf = readFileSync(full);
    return gzip ? generatorChunks(gunzipKeepingDamagedTail(buf)) : Readable.from([buf]);
  }
  return gzip ? generatorChunks(gunzipKeepingDamagedTail(full)) : createReadStream(full, { highWaterMark: READ_CHUNK_BYTES });
}

const generatorChunks = (chunks: AsyncGenerator<Buffer, void, undefined>): Chunks => ({ [Symbol.asyncIterator]: () => chunks, destroy: () => void chunks.return(undefined) });

/** A gzip file's compressed bytes: in memory (a small file), or the path to stream them from. */
type GzipInput = Buffer | string;

/**
 * A gzip file's bytes, inflated as a stream; where it is damaged (a member corrupt or cut short,
 * bytes after the last member that are no member), every byte inflated before the damage too,
 * then the error. The stream alone loses some of them: zlib drops the output of the write that
 * fails (up to a chunk), and a stream's async iterator the chunks it had buffered; they are
 * inflated again (inflatedBeforeDamage), so a large file loses no more than a small one.
 */
async function* gunzipKeepingDamagedTail(input: GzipInput): AsyncGenerator<Buffer, void, undefined> {
  const gunzip = createGunzip({ chunkSize: READ_CHUNK_BYTES });
  if (typeof input === 'string') pipeline(createReadStream(input, { highWaterMark: READ_CHUNK_BYTES }), gunzip, () => {});
  else gunzip.end(input);
  let delivered = 0;
  try {
    for await (const chunk of gunzip as AsyncIterable<Buffer>) {
      delivered += chunk.length;
      yield chunk;
    }
  } catch (err) {
    // bytesWritten: the compressed bytes of the writes that succeeded, known to inflate cleanly.
    if (codeOf(err)?.startsWith('Z_')) yield* await inflatedBeforeDamage(input, gunzip.bytesWritten, delivered);
    throw err;
  } finally {
    gunzip.destroy();
  }
}

/** Past the bytes known clean, the compressed bytes a probe inflater takes at a time (see inflatedBeforeDamage). */
const PROBE_BYTES = 4096;

/**
 * The bytes a damaged gzip file inflates to before the byte in which zlib sees the damage, from
 * output offset `from` on, inflated again. The first `clean` compressed bytes go in whole; the
 * rest a piece at a time to a probe inflater first, and to the kept one only once the probe took
 * the piece without fault. The piece the probe fails on goes to the kept one byte by byte: zlib
 * drops the output of the write it fails in, and that write is then one byte. (Byte by byte
 * throughout would cost seconds a MB.) The end of the input is no fault here: a member cut short
 * gives all it has.
 */
async function inflatedBeforeDamage(input: GzipInput, clean: number, from: number): Promise<Buffer[]> {
  const kept = new PieceInflater(from);
  const probe = new PieceInflater(Infinity);
  const source = typeof input === 'string' ? createReadStream(input, { highWaterMark: READ_CHUNK_BYTES }) : Readable.from([input]);
  let at = 0;
  try {
    read: for await (const chunk of source as AsyncIterable<Buffer>) {
      const whole = Math.min(chunk.length, Math.max(0, clean - at));
      at += chunk.length;
      if (whole > 0) await Promise.all([kept.take(chunk.subarray(0, whole)), probe.take(chunk.subarray(0, whole))]);
      for (let p = whole; p < chunk.length && !kept.failed; p += PROBE_BYTES) {
        const piece = chunk.subarray(p, p + PROBE_BYTES);
        if (await probe.take(piece)) await kept.take(piece);
        else {
          for (let i = 0; i < piece.length && (await kept.take(piece.subarray(i, i + 1))); i++);
          break read;
        }
      }
      if (kept.failed) break;
    }
    await kept.end();
  } catch {
    // The file cannot be read again: what was inflated stays, the damage is the fault reported.
  } finally {
    kept.destroy();
    probe.destroy();
    source.destroy();
  }
  return kept.out;
}

/** A Gunzip given its input a piece at a time, keeping its output from output offset `from` on. */
class PieceInflater {
  readonly out: Buffer[] = [];
  failed = false;
  private inflated = 0;
  // Z_SYNC_FLUSH at the end: input cut short is no error, what it inflates to is kept.
  private readonly gunzip = createGunzip({ chunkSize: READ_CHUNK_BYTES, finishFlush: zlibConstants.Z_SYNC_FLUSH });

  constructor(private readonly from: number) {
    // Flowing: each chunk is taken as zlib gives it, none waits in a buffer an error would empty.
    this.gunzip.on('data', (chunk: Buffer) => {
      const skip = Math.max(0, this.from - this.inflated);
      this.inflated += chunk.length;
      if (skip < chunk.length) this.out.push(skip > 0 ? chunk.subarray(skip) : chunk);
    });
    this.gunzip.on('error', () => (this.failed = true));
  }

  /** Inflates `piece`: true once it is, false where zlib fails on it (or failed before). */
  take(piece: Buffer): Promise<boolean> {
    return this.settled((done) => this.gunzip.write(piece, done));
  }

  /** Ends the input and waits for the last output. */
  end(): Promise<boolean> {
    return this.settled((done) => {
      this.gunzip.once('end', done);
      this.gunzip.end();
    });
  }

  destroy(): void {
    this.gunzip.destroy();
  }

  /** Resolves when `start`'s callback is called or zlib fails, whichever is first. */
  private settled(start: (done: (err?: Error | null) => void) => void): Promise<boolean> {
    if (this.failed) return Promise.resolve(false);
    return new Promise((resolve) => {
      const done = (err?: Error | null): void => {
        if (err) this.failed = true;
        this.gunzip.off('error', done);
        resolve(!this.failed);
      };
      this.gunzip.once('error', done);
      start(done);
    });
  }
}

const codeOf = (err: unknown): string | undefined => (err as NodeJS.ErrnoException)?.code;

/** One line, no control characters. */
const oneLine = (s: string): string => s.replace(/[\x00-\x1f\x7f]+/g, ' ').trim();

/** A reason for a failure to read: a damaged gzip stream, an I/O error, or anything else. */
export function describeError(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  const code = codeOf(err);
  if (typeof code === 'string' && code.startsWith('Z_')) {
    return `${code === 'Z_BUF_ERROR' ? 'truncated gzip' : 'corrupt gzip'} (${oneLine(e.message)})`;
  }
  if (e?.syscall) return `cannot read (${code ?? 'error'}: ${oneLine(String(e.message).split(',')[0]!.replace(/^[A-Z]+: /, ''))})`;
  return oneLine(String(e?.message ?? err));
}

/**
 * Policy for damaged text: a document whose bytes do not decode cleanly (invalid
 * UTF-8, invalid UTF-16 or declared charset) is skipped with the reason, naming file and line,
 * rather than indexed with guessed text. decode.ts describes the damage; this is the one place
 * that turns it into a skip.
 */
const doc = (d: SourceDocument): CorpusItem =>
  d.warning ? { kind: 'skip', skip: { path: d.path, ...(d.line !== undefined ? { line: d.line } : {}), reason: d.warning } } : { kind: 'doc', doc: d };

// ---------------------------------------------------------------------------------------------
// JSONL

/** Where a JSONL read stands between chunks (shared by the stream and the synchronous readers). */
interface JsonlState {
  readonly path: string;
  readonly fields: ResolvedFields;
  readonly lineHandler?: JsonlLineHandler;
  /** A range (see LineRange): read from the byte before it, skip the line that started before it, stop at the first line that starts at or after its end. */
  readonly rangeStart: number;
  readonly rangeEnd: number;
  readonly range?: LineRange;
  pending: Buffer[];
  pendingBytes: number;
  lineNo: number;
  /** Inside an over-long line. */
  discarding: boolean;
  /** No chunk read yet. */
  first: boolean;
  items: number;
  aligned: boolean;
  /** File offset of the current chunk. */
  chunkBase: number;
  /** File offset where the current line starts. */
  lineStart: number;
}

function jsonlState(path: string, fields: ResolvedFields, range: LineRange | undefined, lineHandler: JsonlLineHandler | undefined): JsonlState {
  const rangeStart = range?.start ?? 0;
  return {
    path, fields, lineHandler, rangeStart, rangeEnd: range?.end ?? Infinity, range,
    pending: [], pendingBytes: 0, lineNo: 0, discarding: false, first: true, items: 0,
    aligned: rangeStart === 0, chunkBase: Math.max(0, rangeStart - 1), lineStart: rangeStart,
  };
}

/** The byte a JSONL read starts at: the one before its range, to see whether a line starts at the range. */
const jsonlStreamStart = (range: LineRange | undefined): number => Math.max(0, (range?.start ?? 0) - 1);

function parseJsonlLine(st: JsonlState, raw: Buffer): CorpusItem | undefined {
  const { path, lineNo } = st;
  let end = raw.length;
  if (end > 0 && raw[end - 1] === 0x0d) end--;
  let start = 0;
  // A BOM starts the file only: a later range's first line is not the file's.
  if (lineNo === 1 && st.rangeStart === 0 && end >= 3 && raw[0] === 0xef && raw[1] === 0xbb && raw[2] === 0xbf) start = 3;
  let i = start;
  while (i < end && (raw[i] === 0x20 || raw[i] === 0x09)) i++;
  if (i === end) return undefined; // blank line
  // Most lines need no trimming: no second view (a Buffer's subarray is slow in a cold worker).
  const line = start === 0 && end === raw.length ? raw : raw.subarray(start, end);
  const valid = isUtf8(line);
  const fast = valid && st.lineHandler !== undefined ? st.lineHandler(line) : undefined;
  if (fast !== undefined) {
    const d: SourceDocument = { externalId: fast.externalId ?? `${path}:${lineNo}`, path, line: lineNo, title: '', text: '', bytes: raw.length, termIds: fast.termIds };
    if (fast.externalId === undefined) d.idFromLine = true;
    return { kind: 'doc', doc: d };
  }
  let value: unknown;
  try {
    value = JSON.parse(line.toString('utf8'));
  } catch (err) {
    return { kind: 'skip', skip: { path, line: lineNo, reason: `invalid JSON: ${oneLine((err as Error).message)}` } };
  }
  const r = documentFromJson(value, `${path}:${lineNo}`, st.fields, !valid);
  if ('reason' in r) return { kind: 'skip', skip: { path, line: lineNo, reason: r.reason } };
  const d: SourceDocument = { externalId: r.externalId, path, line: lineNo, title: r.title, text: r.text, bytes: raw.length };
  if (r.idIsFallback) d.idFromLine = true;
  if (r.warning) d.warning = r.warning;
  return doc(d);
}

/**
 * The items of the next chunk of a JSONL file, one at a time (a JsonlLineHandler's TermIds are
 * valid until the next line is taken). Returns true when the read must stop (a binary file, or
 * the end of the range).
 */
function* jsonlChunkItems(st: JsonlState, chunk: Buffer): Generator<CorpusItem, boolean> {
  if (st.first) {
    st.first = false;
    if (st.rangeStart === 0 && hasNulByte(chunk)) {
      // Counted as an item, so that the end does not report the file as empty too.
      st.items++;
      yield { kind: 'skip', skip: { path: st.path, reason: 'binary file' } };
      return true;
    }
  }
  let start = 0;
  if (!st.aligned) {
    const nl = chunk.indexOf(0x0a);
    if (nl < 0) {
      st.chunkBase += chunk.length;
      return false;
    }
    st.aligned = true;
    start = nl + 1;
    st.lineStart = st.chunkBase + start;
  }
  for (;;) {
    if (st.lineStart >= st.rangeEnd) return true;
    const nl = chunk.indexOf(0x0a, start);
    if (nl < 0) break;
    st.lineNo++;
    if (st.discarding) st.discarding = false;
    else {
      let line = chunk.subarray(start, nl);
      if (st.pendingBytes > 0) {
        st.pending.push(line);
        line = Buffer.concat(st.pending, st.pendingBytes + line.length);
        st.pending = [];
        st.pendingBytes = 0;
      }
      const item = parseJsonlLine(st, line);
      if (item) {
        st.items++;
        yield item;
      }
    }
    start = nl + 1;
    st.lineStart = st.chunkBase + start;
  }
  st.chunkBase += chunk.length;
  if (start < chunk.length && !st.discarding) {
    const tail = chunk.subarray(start);
    if (st.pendingBytes + tail.length > MAX_LINE_BYTES) {
      st.items++;
      yield { kind: 'skip', skip: { path: st.path, line: st.lineNo + 1, reason: `line longer than ${MAX_LINE_BYTES / 2 ** 20} MiB` } };
      st.pending = [];
      st.pendingBytes = 0;
      st.discarding = true;
    } else {
      st.pending.push(tail);
      st.pendingBytes += tail.length;
    }
  }
  return false;
}

/** A read error: before anything was read the whole file is skipped, after it the rest. */
function jsonlReadError(st: JsonlState, err: unknown): CorpusItem | undefined {
  // Nothing read yet (the file cannot be opened, e.g. EACCES, or is no gzip at all): the
  // whole file is skipped, as for the other formats, not "line 1 and the rest". (A later
  // range of the file leaves saying so to the first.)
  if (st.first) return st.rangeStart === 0 ? { kind: 'skip', skip: { path: st.path, reason: describeError(err) } } : undefined;
  return { kind: 'skip', skip: { path: st.path, line: st.lineNo + 1, reason: `${describeError(err)}; the rest of the file is skipped` } };
}

/** The last line (without a newline), and the counts of a range or the empty file's skip. */
function* jsonlEndItems(st: JsonlState): Generator<CorpusItem> {
  if (st.pendingBytes > 0 && !st.discarding && st.lineStart < st.rangeEnd) {
    st.lineNo++;
    const item = parseJsonlLine(st, st.pending.length === 1 ? st.pending[0]! : Buffer.concat(st.pending, st.pendingBytes));
    if (item) {
      st.items++;
      yield item;
    }
  }
  // A range reports its counts instead: the file is empty only if all its ranges are.
  if (st.range) st.range.onEnd?.({ lines: st.lineNo, items: st.items });
  else if (st.items === 0) yield { kind: 'skip', skip: { path: st.path, reason: 'empty file' } };
}

async function* readJsonl(full: string, path: string, gzip: boolean, fields: ResolvedFields, size: number, range?: LineRange, lineHandler?: JsonlLineHandler): AsyncGenerator<CorpusItem> {
  const st = jsonlState(path, fields, range, lineHandler);
  try {
    for await (const chunk of openStream(full, gzip, size, jsonlStreamStart(range)) as AsyncIterable<Buffer>) {
      if (yield* jsonlChunkItems(st, chunk)) break;
    }
  } catch (err) {
    const item = jsonlReadError(st, err);
    if (item) yield item;
    return;
  }
  yield* jsonlEndItems(st);
}

/**
 * readCorpusFile for an uncompressed JSONL file, read with synchronous calls and no promise a
 * line: what a parse worker uses (it has nothing else to do meanwhile), sparing it the three
 * async generators a line otherwise passes through and their compilation (mail: whole build
 * 1.125 -> 1.085 s, process CPU 1.89 -> 1.73 s, medians of 8 on the 2-core machine). The same
 * items as readCorpusFile (the tests compare both). Undefined for any other file.
 */
export function readPlainJsonlSync(root: string, relPath: string, options: CorpusOptions = {}, range?: LineRange, lineHandler?: JsonlLineHandler): Iterable<CorpusItem> | undefined {
  const fmt = formatOf(relPath);
  if (fmt?.format !== 'jsonl' || fmt.gzip) return undefined;
  return readJsonlSync(root, relPath, resolveFields(options), range, lineHandler);
}

function* readJsonlSync(root: string, path: string, fields: ResolvedFields, range: LineRange | undefined, lineHandler: JsonlLineHandler | undefined): Generator<CorpusItem> {
  const skip = (reason: string): CorpusItem => ({ kind: 'skip', skip: { path, reason } });
  let full = join(root, path);
  let size: number;
  try {
    let st: Stats;
    try {
      st = statSync(full);
    } catch (err) {
      // A crawl that is one file: see readFileWith.
      if (codeOf(err) !== 'ENOTDIR' || basename(root) !== path) throw err;
      st = statSync(root);
      full = root;
    }
    if (!st.isFile()) return yield skip('not a regular file');
    size = st.size;
  } catch (err) {
    return yield skip(describeError(err));
  }
  if (size === 0) return yield skip('empty file');
  const st = jsonlState(path, fields, range, lineHandler);
  let fd: number | undefined;
  try {
    fd = openSync(full, 'r');
    let at = jsonlStreamStart(range);
    // One buffer for all the file's reads: a fresh one's first touch costs ~5.7 us a page on
    // the development VM (mail's 23 MB read into fresh chunks: ~30 ms of page faults). Only the
    // unfinished line at a chunk's end outlives the chunk, so it is copied out before the next read.
    const chunk = Buffer.allocUnsafeSlow(Math.min(READ_CHUNK_BYTES, Math.max(size - at, 1)));
    for (;;) {
      const n = readSync(fd, chunk, 0, chunk.length, at);
      if (n === 0) break;
      at += n;
      if (yield* jsonlChunkItems(st, n === chunk.length ? chunk : chunk.subarray(0, n))) break;
      for (let i = 0; i < st.pending.length; i++) st.pending[i] = Buffer.from(st.pending[i]!);
    }
  } catch (err) {
    const item = jsonlReadError(st, err);
    if (item) yield item;
    return;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
  yield* jsonlEndItems(st);
}

// ---------------------------------------------------------------------------------------------
// JSON

/** stream-json's end-of-input marker (stream-chain's `none`). */
const NONE = Symbol.for('object-stream.none');
type ElementParser = (input: Uint8Array | symbol) => AsyncIterable<{ key: number; value: unknown }>;
// stream-json is required on first use: most crawls have no JSON arrays, and each parse worker
// would otherwise load it at start-up.
const require = createRequire(import.meta.url);
const newArrayParser = (): ElementParser =>
  (require('stream-json/streamers/stream-array.js') as typeof import('stream-json/streamers/stream-array.js')).streamArray.withParser({ streamValues: false }) as unknown as ElementParser;

/** A syntax error of stream-json, with the byte offset of the piece of input it was fed with. */
class JsonSyntaxError extends Error {
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(message);
  }
}

interface Element {
  key: number;
  value: unknown;
  /** Raw bytes: the bytes fed to the parser since the previous element, shared out per piece. */
  bytes: number;
}

/**
 * The elements of a top-level JSON array. When the parser throws, it loses the elements it had
 * completed within the same piece of input, so from byte `fineFrom` on it is fed byte by byte
 * (the recovery pass after an error, see readJson).
 */
async function* arrayElements(chunks: AsyncIterable<Buffer>, fineFrom: number): AsyncGenerator<Element> {
  const parse = newArrayParser();
  let pos = 0; // bytes fed so far
  let carry = 0; // bytes fed since the last element
  const out: { key: number; value: unknown }[] = [];
  const feed = async (input: Uint8Array | symbol): Promise<void> => {
    try {
      for await (const el of parse(input)) out.push(el);
    } catch (err) {
      throw new JsonSyntaxError((err as Error)?.message ?? String(err), pos);
    }
    if (typeof input !== 'symbol') {
      pos += input.length;
      carry += input.length;
    }
  };
  function* share(): Generator<Element> {
    const n = out.length;
    if (n === 0) return;
    const each = Math.floor(carry / n);
    let extra = carry - each * n;
    for (const el of out) {
      yield { key: el.key, value: el.value, bytes: each + extra };
      extra = 0;
    }
    out.length = 0;
    carry = 0;
  }
  for await (const chunk of chunks) {
    let off = 0;
    while (off < chunk.length) {
      if (pos >= fineFrom) {
        await feed(chunk.subarray(off, off + 1));
        off++;
      } else {
        const end = Math.min(chunk.length, off + JSON_SLICE_BYTES, off + (fineFrom - pos));
        await feed(chunk.subarray(off, end));
        off = end;
      }
      yield* share();
    }
  }
  await feed(NONE);
  yield* share();
}

async function* prepend(head: Buffer[], rest: AsyncIterator<Buffer>): AsyncGenerator<Buffer> {
  yield* head;
  for (;;) {
    const r = await rest.next();
    if (r.done) return;
    yield r.value;
  }
}

async function* readJson(full: string, path: string, gzip: boolean, fields: ResolvedFields, size: number): AsyncGenerator<CorpusItem> {
  // Peek at the first significant byte: '[' streams element by element, anything else is one document.
  const stream = openStream(full, gzip, size);
  const it = (stream as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
  const head: Buffer[] = [];
  let first: number | undefined;
  let headBytes = 0;
  try {
    while (first === undefined) {
      const r = await it.next();
      if (r.done) break;
      const chunk = r.value;
      if (head.length === 0 && hasNulByte(chunk)) {
        stream.destroy();
        return yield { kind: 'skip', skip: { path, reason: 'binary file' } };
      }
      let i = head.length === 0 && chunk[0] === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf ? 3 : 0;
      while (i < chunk.length && (chunk[i] === 0x20 || chunk[i] === 0x0a || chunk[i] === 0x0d || chunk[i] === 0x09)) i++;
      if (i < chunk.length) first = chunk[i];
      head.push(chunk);
      headBytes += chunk.length;
    }
  } catch (err) {
    stream.destroy();
    return yield { kind: 'skip', skip: { path, reason: describeError(err) } };
  }
  if (first === undefined) return yield { kind: 'skip', skip: { path, reason: 'empty file' } };

  if (first !== 0x5b) {
    // One document: it has to be in memory anyway.
    let buf: Buffer;
    try {
      buf = await collect(head, headBytes, it);
    } catch (err) {
      stream.destroy();
      return yield { kind: 'skip', skip: { path, reason: describeError(err) } };
    }
    yield singleJsonDocument(buf, path, fields);
    return;
  }

  let handled = 0; // elements [0, handled) have been yielded (as documents or skips)
  const toItem = (el: Element): CorpusItem => {
    const r = documentFromJson(el.value, `${path}#${el.key}`, fields, true);
    if ('reason' in r) return { kind: 'skip', skip: { path, line: el.key, reason: r.reason } };
    const d: SourceDocument = { externalId: r.externalId, path, line: el.key, title: r.title, text: r.text, bytes: el.bytes };
    if (r.warning) d.warning = r.warning;
    return doc(d);
  };
  let failure: unknown;
  try {
    for await (const el of arrayElements(prepend(head, it), Infinity)) {
      if (el.key < handled) continue;
      handled = el.key + 1;
      yield toItem(el);
    }
  } catch (err) {
    failure = err;
  } finally {
    stream.destroy();
  }
  if (failure instanceof JsonSyntaxError) {
    // Elements completed in the failing piece before the error were lost with it: parse again
    // up to that piece, then byte by byte, to index them too.
    const again = openStream(full, gzip, size);
    try {
      for await (const el of arrayElements(again as AsyncIterable<Buffer>, failure.offset)) {
        if (el.key < handled) continue;
        handled = el.key + 1;
        yield toItem(el);
      }
    } catch (err) {
      failure = err;
    } finally {
      again.destroy();
    }
  }
  if (failure !== undefined) {
    const what = failure instanceof JsonSyntaxError ? `invalid JSON (${oneLine(failure.message)})` : describeError(failure);
    yield { kind: 'skip', skip: { path, line: handled, reason: `${what} at array element ${handled}; the rest of the file is skipped` } };
  } else if (handled === 0) {
    yield { kind: 'skip', skip: { path, reason: 'empty array' } };
  }
}

async function collect(head: Buffer[], headBytes: number, rest: AsyncIterator<Buffer>): Promise<Buffer> {
  const chunks = [...head];
  let size = headBytes;
  for (;;) {
    const r = await rest.next();
    if (r.done) break;
    size += r.value.length;
    if (size > MAX_WHOLE_FILE_BYTES) throw new Error(tooLarge());
    chunks.push(r.value);
  }
  return Buffer.concat(chunks, size);
}

const tooLarge = (): string => `larger than ${MAX_WHOLE_FILE_BYTES / 2 ** 20} MiB (a single document is read whole; split it, or use JSONL or a JSON array)`;

function singleJsonDocument(buf: Buffer, path: string, fields: ResolvedFields): CorpusItem {
  let body = buf;
  if (body.length >= 3 && body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf) body = body.subarray(3);
  const valid = isUtf8(body);
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch (err) {
    const msg = oneLine((err as Error).message);
    const hint = /after JSON/.test(msg) ? ' (one document a line? name the file .jsonl)' : '';
    return { kind: 'skip', skip: { path, reason: `invalid JSON: ${msg}${hint}` } };
  }
  const r = documentFromJson(value, path, fields, !valid);
  if ('reason' in r) return { kind: 'skip', skip: { path, reason: r.reason } };
  const d: SourceDocument = { externalId: r.externalId, path, title: r.title, text: r.text, bytes: buf.length };
  if (r.warning) d.warning = r.warning;
  return doc(d);
}

// ---------------------------------------------------------------------------------------------
// HTML, text, Markdown: one document per file.

async function readWhole(full: string, gzip: boolean, size: number): Promise<Buffer> {
  if (!gzip) {
    if (size > MAX_WHOLE_FILE_BYTES) throw new Error(tooLarge());
    return size <= SMALL_FILE_BYTES ? readFileSync(full) : readFile(full);
  }
  const stream = openStream(full, gzip, size);
  try {
    return await collect([], 0, (stream as AsyncIterable<Buffer>)[Symbol.asyncIterator]());
  } finally {
    stream.destroy();
  }
}

async function* readWholeDocument(full: string, path: string, gzip: boolean, format: Exclude<CorpusFormat, 'jsonl' | 'json'>, size: number): AsyncGenerator<CorpusItem> {
  let buf: Buffer;
  try {
    buf = await readWhole(full, gzip, size);
  } catch (err) {
    return yield { kind: 'skip', skip: { path, reason: describeError(err) } };
  }
  yield wholeDocument(buf, path, format);
}

/**
 * A parse worker's inverter (DocumentInverter) taking documents as bytes: each gives the TermIds,
 * a view valid until the next call, or undefined where the text must be decoded.
 */
export interface BytesInverters {
  /** A document's title and its text's UTF-8 bytes (invertUtf8): a page's extraction, a text file. */
  utf8Text: Utf8TextInverter;
  /** The title's terms in the TermIds the last call gave (for positions). */
  titleLength: () => number;
}

/**
 * The document of a whole .html, .txt or .md file's bytes (not kept: `buf` may be reused). With
 * `inverters` it comes inverted (SourceDocument.termIds, title and text '') where it can be from
 * its bytes: a .txt file decided UTF-8 (decodeFile's rule) whose bytes are valid, and a UTF-8
 * page's extracted text (readHtmlPageInverted), where utf8Text takes them.
 */
export function wholeDocument(buf: Buffer, path: string, format: Exclude<CorpusFormat, 'jsonl' | 'json'>, inverters?: BytesInverters): CorpusItem {
  const inverted = (termIds: Uint32Array): CorpusItem => ({ kind: 'doc', doc: { externalId: path, path, title: '', text: '', bytes: buf.length, termIds } });
  // A text file decoded once, whether its bytes are inverted or not.
  let textFile: PageRead | undefined;
  if (inverters && format === 'text') {
    const decoded = decodeTextFile(buf);
    if (!('utf8' in decoded)) textFile = decoded;
    else {
      const termIds = inverters.utf8Text('', decoded.utf8);
      if (termIds) return inverted(termIds);
      textFile = { text: decoded.utf8.toString('utf8') };
    }
  }
  const read: PageRead | { termIds: Uint32Array } = textFile ?? (format !== 'html' ? decodeFile(buf) : inverters ? readHtmlPageInverted(buf, inverters.utf8Text) : readHtmlPage(buf));
  if ('termIds' in read) return inverted(read.termIds);
  if ('reason' in read) return { kind: 'skip', skip: { path, reason: read.reason } };
  const { title = '', text } = format === 'markdown' ? markdownTitle(read.text) : read;
  const d: SourceDocument = { externalId: path, path, title, text, bytes: buf.length };
  if (read.warning) d.warning = read.warning;
  return doc(d);
}

const FRONT_MATTER = /^---[ \t]*\r?\n([\s\S]*?)\r?\n(?:---|\.\.\.)[ \t]*(?:\r?\n|$)/;
const ATX_HEADING = /^[ \t]{0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/;
const SETEXT_UNDERLINE = /^[ \t]{0,3}(?:=+|-+)[ \t]*$/;

/**
 * Markdown: YAML front matter is dropped (its `title:` is used as title); otherwise the first
 * non-empty line is the title when it is a heading (`# Title`, or a line underlined with === or
 * ---), and is then not repeated in the text.
 */
export function markdownTitle(md: string): { title: string; text: string } {
  let text = md;
  const fm = FRONT_MATTER.exec(text);
  if (fm) {
    text = text.slice(fm[0].length);
    const t = /^title:[ \t]*(.*?)[ \t]*$/m.exec(fm[1]!);
    if (t) return { title: t[1]!.replace(/^(["'])(.*)\1$/, '$2'), text };
  }
  const lead = /^(?:[ \t]*\r?\n)*/.exec(text)![0].length;
  const eol = text.indexOf('\n', lead);
  const line = (eol < 0 ? text.slice(lead) : text.slice(lead, eol)).replace(/\r$/, '');
  const atx = ATX_HEADING.exec(line);
  if (atx) return { title: atx[1]!.trim(), text: eol < 0 ? '' : text.slice(eol + 1) };
  if (eol >= 0 && line.trim() !== '') {
    const eol2 = text.indexOf('\n', eol + 1);
    const next = (eol2 < 0 ? text.slice(eol + 1) : text.slice(eol + 1, eol2)).replace(/\r$/, '');
    if (SETEXT_UNDERLINE.test(next) && !/^[ \t]{0,3}[-*_]/.test(line)) return { title: line.trim(), text: eol2 < 0 ? '' : text.slice(eol2 + 1) };
  }
  return { title: '', text };
}
