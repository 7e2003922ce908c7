/**
 * Reads a WARC file (`.warc`, `.warc.gz`, `.warc.wet.gz`) into corpus items: a document per
 * response, resource or conversion record of HTML or text (warc-document.ts), a count for
 * every other record, one skip line per fault.
 *
 * A `.warc.gz` is a series of gzip members, one per record (Common Crawl's layout), or one for
 * the whole file. Members are inflated one at a time by node:zlib's raw inflate (one engine
 * reused for all, raw-inflater.ts), so each member's place in the file is known: that is what
 * a fault names, what a damaged member is skipped by (the reader resumes at the next member
 * whose content starts a record), and where a large file is cut into parse tasks (`range`: the members that start in
 * [start, end), see indexer/parse/jsonl-ranges.ts). A member too large to inflate in one call
 * (a whole-file member) is streamed.
 */
import { closeSync, createReadStream, openSync, readSync } from 'node:fs';
import { constants, crc32, createInflateRaw, inflateRawSync } from 'node:zlib';
import { RawInflater } from './raw-inflater.js';
import { recordOutcome } from './warc-document.js';
import type { BytesInverters } from './read-file.js';
import { MAX_BLOCK_BYTES, WarcRecordParser, type WarcRecord } from './warc-records.js';
import type { LineRange } from './read-file.js';
import type { CorpusItem } from './types.js';

const READ_BYTES = 1 << 20;
/** Bytes of a .warc.gz read at a time: many members each. */
const WINDOW_BYTES = 4 << 20;
/** First window a member's compressed bytes are read into; grown 4x while the member does not end in it. */
const FIRST_WINDOW = 256 * 1024;
/** This thread's inflate engine, reused for every member of every file it reads (raw-inflater.ts). */
const inflater = new RawInflater();
/** Members whose compressed bytes do not end within this are streamed. */
const MAX_SYNC_WINDOW = 64 << 20;
/** Largest output of one synchronous inflate (a record's block and its header). */
const MAX_SYNC_OUTPUT = MAX_BLOCK_BYTES + (1 << 20);
const RECORD_START = Buffer.from('WARC/1.');

/**
 * The items of a WARC file. `doc` applies the readers' policy for documents with a warning;
 * `range` (gzip only) limits the read to the members starting in [start, end).
 */
export async function* readWarc(full: string, path: string, gzip: boolean, size: number, doc: (d: CorpusItem & { kind: 'doc' }) => CorpusItem, range?: LineRange, inverters?: BytesInverters): AsyncGenerator<CorpusItem> {
  let items = 0;
  const toItem = (r: WarcRecord): CorpusItem => {
    const o = recordOutcome(r, path, inverters?.utf8Text);
    if ('doc' in o && o.doc.termIds) {
      // A member's records are read before the worker takes the first: the TermIds are copied
      // out of the inverter's view, with the title's length the inverter holds until its next call.
      o.doc.termIds = o.doc.termIds.slice();
      o.doc.titleTerms = inverters!.titleLength();
    }
    if ('doc' in o) {
      // Damaged text (a warning) names its record, as every other fault does: the file alone does not say which of its records.
      const d = o.doc.warning ? { ...o.doc, warning: `${describe(r.offset)}: ${o.doc.warning}` } : o.doc;
      return doc({ kind: 'doc', doc: d });
    }
    if ('ignored' in o) return { kind: 'ignored', path, what: o.ignored };
    return { kind: 'skip', skip: { path, reason: `${describe(r.offset)}: ${o.damaged}` } };
  };
  let describe: (offset: number) => string = (o) => `record at offset ${o}`;
  for await (const item of readWarcRecords(full, path, gzip, size, toItem, (d) => (describe = d), range)) {
    items++;
    yield item;
  }
  // A range says how many items it had (none in every range: reported as an empty file).
  range?.onEnd?.({ lines: 0, items });
}

/**
 * The records of a WARC file, each given to `onRecord` (whose item, if any, is yielded), and a
 * skip item for each fault. `onWhere` receives the function that names a record's place (a
 * stream offset) for fault lines. Also what bench/warc.mjs times the record layer with.
 */
export async function* readWarcRecords(
  full: string,
  path: string,
  gzip: boolean,
  size: number,
  onRecord: (r: WarcRecord) => CorpusItem | undefined,
  onWhere?: (describe: (offset: number) => string) => void,
  range?: LineRange,
): AsyncGenerator<CorpusItem> {
  const out: CorpusItem[] = [];
  let where: (offset: number) => string = (o) => `record at offset ${o}`;
  const parser = new WarcRecordParser({
    record(r: WarcRecord) {
      const item = onRecord(r);
      if (item) out.push(item);
    },
    damage(offset, reason) {
      out.push({ kind: 'skip', skip: { path, reason: `${where(offset)}: ${reason}` } });
    },
  });
  let fd: number;
  try {
    fd = openSync(full, 'r');
  } catch (err) {
    if (range && range.start > 0) return; // the file's first range reports it
    throw err;
  }
  try {
    if (!gzip) {
      for (let at = 0; at < size; ) {
        const chunk = Buffer.allocUnsafe(Math.min(READ_BYTES, size - at));
        const n = readSync(fd, chunk, 0, chunk.length, at);
        if (n === 0) break;
        at += n;
        parser.push(n === chunk.length ? chunk : chunk.subarray(0, n));
        yield* out.splice(0);
      }
      parser.end();
      yield* out.splice(0);
      return;
    }
    const members = new MemberMap();
    where = (o) => members.describe(o);
    onWhere?.(where);
    const file = new GzipFile(fd, size);
    const end = range?.end ?? Infinity;
    let pos = range && range.start > 0 ? file.nextRecordMember(range.start) : 0;
    // A member that starts a record ends the one before, if it is still open (its
    // Content-Length ran past its member): reported here, so that a range's last record and
    // the next range's first are decided the same way whatever the cut.
    const startMember = (first: Buffer): void => {
      if (startsRecord(first)) parser.cut('the record does not end with its gzip member (Content-Length too large, or the record cut short)');
    };
    // A range ends at the first member at or after its end that starts a record: where the next range starts.
    while (pos < size && (pos < end || !file.isRecordMember(pos))) {
      const m = file.inflate(pos);
      if ('garbage' in m) {
        const next = file.nextRecordMember(pos + 1);
        out.push({ kind: 'skip', skip: { path, reason: `offset ${pos}: ${next - pos} bytes that are no gzip member${next < size ? '' : ' (to the end of the file)'}` } });
        parser.gap();
        pos = next;
      } else if ('out' in m) {
        startMember(m.out);
        members.add(parser.position, pos);
        parser.push(m.out);
        // m.out is the inflater's buffer: the parser may go on holding part of it.
        if (parser.holdsBytes) inflater.keep();
        pos = m.next;
      } else {
        // Too large for one call, or damaged: streamed, so that what inflates before a fault is
        // kept. A member known to be damaged is read quietly: its one fault line is below.
        parser.quiet = m.damaged;
        const inflate = createInflateRaw({ chunkSize: READ_BYTES });
        const source = createReadStream(full, { start: m.dataStart, highWaterMark: READ_BYTES });
        source.pipe(inflate);
        let crc = 0;
        let length = 0;
        let fault: string | undefined;
        try {
          for await (const chunk of inflate as AsyncIterable<Buffer>) {
            if (length === 0) {
              startMember(chunk);
              members.add(parser.position, pos);
            }
            crc = crc32(chunk, crc);
            length += chunk.length;
            parser.push(chunk);
            yield* out.splice(0);
          }
        } catch (err) {
          const code = (err as NodeJS.ErrnoException).code;
          fault = code === 'Z_BUF_ERROR' ? 'cut short (the file ends inside it)' : `corrupt (${(err as Error).message})`;
        } finally {
          source.destroy();
        }
        const consumed = inflate.bytesWritten;
        fault ??= file.trailerFault(m.dataStart + consumed, crc, length);
        parser.quiet = false;
        if (fault !== undefined) {
          const lost = parser.midRecord ? '; the record in it is lost' : '';
          out.push({ kind: 'skip', skip: { path, reason: `gzip member at offset ${pos}: ${fault}${lost}` } });
          parser.gap();
          pos = file.nextRecordMember(pos + 1);
        } else pos = m.dataStart + consumed + 8;
      }
      yield* out.splice(0);
    }
    if (pos < size) parser.cut('the record does not end with its gzip member (Content-Length too large, or the record cut short)');
    parser.end();
    yield* out.splice(0);
  } finally {
    closeSync(fd);
  }
}

/** Stream offsets of the inflated bytes -> the members they came from, for fault lines. */
class MemberMap {
  private starts: number[] = [];
  private offsets: number[] = [];

  add(streamStart: number, fileOffset: number): void {
    this.starts.push(streamStart);
    this.offsets.push(fileOffset);
    if (this.starts.length > 4096) {
      this.starts.splice(0, 2048);
      this.offsets.splice(0, 2048);
    }
  }

  describe(streamOffset: number): string {
    let k = this.starts.length - 1;
    while (k > 0 && this.starts[k]! > streamOffset) k--;
    const inner = streamOffset - (this.starts[k] ?? 0);
    const at = this.offsets[k] ?? 0;
    return inner === 0 ? `record at offset ${at}` : `record at byte ${inner} of the gzip member at offset ${at}`;
  }
}

/** An intact member's bytes; no gzip header here; or one to stream, being too large for one call or damaged. */
type Inflated = { out: Buffer; next: number } | { garbage: true } | { stream: true; dataStart: number; damaged: boolean };

/** Synchronous access to a .warc.gz's members. */
class GzipFile {
  /** The file's bytes [windowStart, windowStart + window.length): members are inflated from views of it, not read one by one. */
  private window = Buffer.alloc(0);
  private windowStart = 0;

  constructor(
    private readonly fd: number,
    private readonly size: number,
  ) {}

  /** Bytes [at, at + n) of the file, fewer at its end; a view valid as long as the caller holds it (a window is never reused). */
  private read(at: number, n: number): Buffer {
    const want = Math.max(0, Math.min(n, this.size - at));
    const off = at - this.windowStart;
    if (off >= 0 && off + want <= this.window.length) return this.window.subarray(off, off + want);
    const b = Buffer.allocUnsafe(Math.max(want, Math.min(WINDOW_BYTES, this.size - at)));
    const got = b.length > 0 ? readSync(this.fd, b, 0, b.length, at) : 0;
    this.window = got === b.length ? b : b.subarray(0, got);
    this.windowStart = at;
    return this.window.subarray(0, Math.min(want, got));
  }

  /** Length of the gzip header at `at` (RFC 1952: fixed 10 bytes, optional extra, name, comment, header CRC), or -1. */
  headerLength(at: number): number {
    const h = this.read(at, 10);
    if (h.length < 10 || h[0] !== 0x1f || h[1] !== 0x8b || h[2] !== 8 || (h[3]! & 0xe0) !== 0) return -1;
    const flags = h[3]!;
    let p = at + 10;
    if (flags & 4) {
      const x = this.read(p, 2);
      if (x.length < 2) return -1;
      p += 2 + x.readUInt16LE(0);
    }
    for (const bit of [8, 16]) {
      if (!(flags & bit)) continue;
      for (;;) {
        const b = this.read(p, 4096);
        if (b.length === 0) return -1;
        const z = b.indexOf(0);
        if (z >= 0) {
          p += z + 1;
          break;
        }
        p += b.length;
      }
    }
    if (flags & 2) p += 2;
    return p <= this.size ? p - at : -1;
  }

  /** The member at `at` inflated, checked against its trailer. */
  inflate(at: number): Inflated {
    const h = this.headerLength(at);
    if (h < 0) return { garbage: true };
    const dataStart = at + h;
    for (let w = FIRST_WINDOW; ; w *= 4) {
      const window = this.read(dataStart, w);
      try {
        const r = inflater.inflate(window, MAX_SYNC_OUTPUT);
        if (this.trailerFault(dataStart + r.consumed, crc32(r.buffer), r.buffer.length) !== undefined) return { stream: true, dataStart, damaged: true };
        return { out: r.buffer, next: dataStart + r.consumed + 8 };
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        const more = code === 'Z_BUF_ERROR' && window.length === w;
        if (more && w < MAX_SYNC_WINDOW) continue;
        // Too large for one call (its compressed bytes or its output), or damaged (corrupt, or cut by the end of the file).
        return { stream: true, dataStart, damaged: !more && code !== 'ERR_BUFFER_TOO_LARGE' };
      }
    }
  }

  /** Why the trailer at `at` does not match the inflated bytes (CRC-32 and length mod 2^32), or undefined. */
  trailerFault(at: number, crc: number, length: number): string | undefined {
    const t = this.read(at, 8);
    if (t.length < 8) return 'cut short (no gzip trailer)';
    if (t.readUInt32LE(0) !== crc >>> 0) return 'CRC-32 does not match';
    if (t.readUInt32LE(4) !== length % 2 ** 32) return 'length does not match its trailer';
    return undefined;
  }

  /** Whether a gzip member starts at `at` whose content starts a WARC record. */
  isRecordMember(at: number): boolean {
    const h = this.headerLength(at);
    if (h < 0) return false;
    const head = this.read(at + h, 64 * 1024);
    let opening: Buffer;
    try {
      opening = inflateRawSync(head, { finishFlush: constants.Z_SYNC_FLUSH, maxOutputLength: 1 << 20 });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ERR_BUFFER_TOO_LARGE') return false;
      return true; // a highly compressed start: checked below by its full inflate
    }
    // Judged on its opening only: damage further in is the reading's to report, whichever range reads it.
    return startsRecord(opening);
  }

  /** The first offset at or after `from` where a record member starts; the file's size when none does. */
  nextRecordMember(from: number): number {
    for (let at = from; at < this.size; ) {
      const b = this.read(at, READ_BYTES);
      let i = 0;
      for (;;) {
        i = b.indexOf(0x1f, i);
        if (i < 0 || i + 2 >= b.length) break;
        if (b[i + 1] === 0x8b && b[i + 2] === 8 && this.isRecordMember(at + i)) return at + i;
        i++;
      }
      if (b.length < READ_BYTES) break;
      at += b.length - 2; // a magic split between reads is seen by the next
    }
    return this.size;
  }
}

const startsRecord = (b: Buffer): boolean => b.length >= RECORD_START.length && b.subarray(0, RECORD_START.length).equals(RECORD_START);
