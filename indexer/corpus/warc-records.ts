/**
 * WARC 1.0 / 1.1 records (ISO 28500) out of a byte stream, by their Content-Length: a record is
 * a version line, header lines, CRLF, `Content-Length` bytes of block, CRLF CRLF. Parsed here
 * rather than with an npm reader: `warcio` inflates in pure JS (108 MB/s against node:zlib's
 * ~540 MB/s for the same records) and `node-warc` splits on lines and ignores Content-Length,
 * which corrupts binary and CRLF-bearing payloads.
 *
 * The parser is pushed the decompressed bytes in order and never throws: damage (no version
 * line where a record should start, a header that does not end, a missing or bad
 * Content-Length, a block not followed by CRLF CRLF, bytes between records) is reported once,
 * at the stream offset where it was met, and parsing resumes at the next "WARC/1.". A block with a wrong Content-Length is therefore dropped whole, and the records it
 * swallowed are found again by that scan.
 */

/** Longest header section read before calling it damaged. */
export const MAX_HEADER_BYTES = 64 * 1024;
/** Largest record block held in memory; a larger one is skipped (reported) without being held. */
export const MAX_BLOCK_BYTES = 256 * 2 ** 20;

const VERSION = Buffer.from('WARC/1.');
const CRLFCRLF = Buffer.from('\r\n\r\n');
const GARBAGE = 'bytes that are no WARC record';

export interface WarcRecord {
  /** Stream offset of the version line. */
  offset: number;
  /** Header names lowercased; the first of repeated names wins. */
  headers: Map<string, string>;
  block: Buffer;
}

export interface RecordSink {
  record(r: WarcRecord): void;
  /** Damage at stream offset `offset` (one call per fault). */
  damage(offset: number, reason: string): void;
}

/**
 * A push parser. `push` takes the next bytes of the stream, `end` says there are no more. After
 * `gap` (a damaged gzip member: its bytes are missing) a record in progress is dropped silently,
 * the caller having reported the damage, and the next bytes are scanned for a record start.
 */
export class WarcRecordParser {
  private chunks: Buffer[] = [];
  private held = 0;
  /** Stream offset of the first held byte. */
  private base = 0;
  /** Bytes of an oversize block still to discard before its trailer. */
  private discard = 0;
  /** Stream offset the held bytes must reach before parsing is worth trying again (a long block arriving in pieces). */
  private needUntil = 0;
  /** Scanning for a record start after damage (reported): nothing more is reported until a record parses. */
  private scanning = false;

  /**
   * Set while the bytes pushed come from a gzip member known to be damaged (reported once by
   * the caller): the records before the damage are still read, its consequences not reported.
   */
  quiet = false;

  constructor(private readonly sink: RecordSink) {}

  private report(offset: number, reason: string): void {
    if (!this.quiet) this.sink.damage(offset, reason);
  }

  /** Stream offset of the next byte pushed. */
  get position(): number {
    return this.base + this.held;
  }

  /** Whether the parser holds bytes pushed (views of them) past the push: the next push's caller must not reuse them. */
  get holdsBytes(): boolean {
    return this.held > 0;
  }

  /** Whether a record has begun and not ended (bytes held that are not just separators, nor skipped by a scan after damage). */
  get midRecord(): boolean {
    if (this.discard > 0) return true;
    if (this.held === 0 || this.scanning) return false;
    const b = this.contiguous();
    return skipSeparators(b, 0) < b.length;
  }

  push(chunk: Buffer): void {
    if (chunk.length === 0) return;
    if (this.discard > 0) {
      const n = Math.min(this.discard, chunk.length);
      this.discard -= n;
      this.base += n;
      chunk = chunk.subarray(n);
      if (chunk.length === 0) return;
    }
    this.chunks.push(chunk);
    this.held += chunk.length;
    if (this.base + this.held < this.needUntil) return; // concatenated once, when the block is whole
    this.parse(false);
  }

  end(): void {
    this.parse(true);
    if (this.discard > 0) {
      this.report(this.base, 'record cut short (the stream ends inside its block)');
    }
    this.drop(this.held);
  }

  /** Ends a record in progress as damaged (reported at its start), then as gap(). */
  cut(reason: string): void {
    if (this.midRecord) {
      const b = this.contiguous();
      this.report(this.base + skipSeparators(b, 0), reason);
    }
    this.gap();
    this.scanning = false;
  }

  gap(): void {
    this.drop(this.held);
    this.needUntil = 0;
    this.discard = 0;
    this.scanning = true;
  }

  private contiguous(): Buffer {
    if (this.chunks.length > 1) this.chunks = [Buffer.concat(this.chunks, this.held)];
    return this.chunks[0] ?? Buffer.alloc(0);
  }

  private drop(n: number): void {
    if (n === 0) return;
    if (n >= this.held) {
      this.base += this.held;
      this.chunks = [];
      this.held = 0;
      return;
    }
    const b = this.contiguous();
    this.chunks = [b.subarray(n)];
    this.held -= n;
    this.base += n;
  }

  /**
   * Reports damage at `at` (buffer index) and drops everything up to the next record start after
   * it. Until a record parses again, whatever fails (stray bytes, a false start inside a damaged
   * payload) is part of the damage already reported.
   */
  private resync(at: number, reason: string, final: boolean): boolean {
    if (!this.scanning) this.report(this.base + at, reason);
    this.scanning = true;
    const b = this.contiguous();
    at += 1; // past the failed start
    // Any "WARC/1.", not only one at a line start: stray bytes before a record need not end
    // with a line break. A false start (the text inside a payload) fails as a record and is
    // scanned past in turn, reported as part of this damage.
    const next = b.indexOf(VERSION, at);
    if (next < 0) {
      // Keep a possible partial "WARC/1." at the end.
      this.drop(final ? this.held : Math.max(0, b.length - VERSION.length + 1));
      return false;
    }
    this.drop(next);
    return true;
  }

  private parse(final: boolean): void {
    for (;;) {
      if (this.held === 0) return;
      const b = this.contiguous();
      const start = skipSeparators(b, 0);
      if (start === b.length) {
        if (final) this.drop(this.held);
        return;
      }
      if (b.length - start < VERSION.length) {
        if (!final && VERSION.subarray(0, b.length - start).equals(b.subarray(start))) return;
        if (!this.resync(start, GARBAGE, final)) return;
        continue;
      }
      if (!b.subarray(start, start + VERSION.length).equals(VERSION)) {
        if (!this.resync(start, GARBAGE, final)) return;
        continue;
      }
      const headerEnd = b.indexOf(CRLFCRLF, start);
      if (headerEnd < 0 || headerEnd - start > MAX_HEADER_BYTES) {
        if (headerEnd < 0 && b.length - start <= MAX_HEADER_BYTES && !final) return;
        const why = headerEnd < 0 && final ? 'record cut short (the stream ends inside its header)' : `header longer than ${MAX_HEADER_BYTES / 1024} KiB`;
        if (!this.resync(start, why, final)) return;
        continue;
      }
      const headers = parseHeaders(b.toString('latin1', start, headerEnd));
      const lengthText = headers.get('content-length');
      if (lengthText === undefined || !/^\d{1,15}$/.test(lengthText)) {
        if (!this.resync(start, lengthText === undefined ? 'no Content-Length' : `bad Content-Length "${lengthText.slice(0, 40)}"`, final)) return;
        continue;
      }
      const length = Number(lengthText);
      const blockStart = headerEnd + 4;
      if (length > MAX_BLOCK_BYTES) {
        // While scanning past damage, most likely a false start: not trusted with a skip that long.
        if (this.scanning) {
          if (!this.resync(start, '', final)) return;
          continue;
        }
        this.report(this.base + start, `record larger than ${MAX_BLOCK_BYTES / 2 ** 20} MiB (not read)`);
        this.scanning = false;
        const skip = blockStart + length + 4;
        if (skip <= b.length) this.drop(skip);
        else {
          this.discard = skip - b.length;
          this.drop(this.held);
        }
        continue;
      }
      const recordEnd = blockStart + length;
      if (b.length < recordEnd + 4) {
        if (!final) {
          this.needUntil = this.base + recordEnd + 4;
          return;
        }
        // The stream ends after the whole block, short of (some of) the CRLF CRLF that closes it:
        // the record is intact, as a JSONL file's last line is without its newline.
        if (b.length >= recordEnd && b.subarray(recordEnd).equals(CRLFCRLF.subarray(0, b.length - recordEnd))) {
          this.scanning = false;
          const offset = this.base + start;
          const block = b.subarray(blockStart, recordEnd);
          this.drop(b.length);
          this.sink.record({ offset, headers, block });
          continue;
        }
        if (!this.resync(start, 'record cut short (the stream ends inside its block)', final)) return;
        continue;
      }
      if (!b.subarray(recordEnd, recordEnd + 4).equals(CRLFCRLF)) {
        if (!this.resync(start, `Content-Length ${length} does not end the block (no CRLF CRLF after it)`, final)) return;
        continue;
      }
      this.scanning = false;
      const offset = this.base + start;
      const block = b.subarray(blockStart, recordEnd); // a view: the sink uses it before returning
      this.drop(recordEnd + 4);
      this.sink.record({ offset, headers, block });
    }
  }
}

/** Index of the first byte at or after `i` that is not CR or LF (writers differ in the blank lines between records). */
function skipSeparators(b: Buffer, i: number): number {
  while (i < b.length && (b[i] === 0x0d || b[i] === 0x0a)) i++;
  return i;
}

/** Header lines after the version line; continuation lines (leading space or tab) are joined. */
export function parseHeaders(text: string): Map<string, string> {
  const headers = new Map<string, string>();
  const lines = text.split(/\r?\n/);
  let last: string | undefined;
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!;
    if ((line.startsWith(' ') || line.startsWith('\t')) && last !== undefined) {
      headers.set(last, `${headers.get(last)} ${line.trim()}`.trim());
      continue;
    }
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    if (headers.has(name)) {
      last = undefined;
      continue;
    }
    headers.set(name, line.slice(colon + 1).trim());
    last = name;
  }
  return headers;
}
