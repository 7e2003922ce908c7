/**
 * The WebAssembly ASCII scanner (indexer/wasm/ascii-scan.ts, built to ascii-scan.wasm): the
 * same tokens and cache as scanAscii with AsciiTermTable, about 3x faster (inverting the
 * 2 GB synthetic crawl on the H100 machine: 12.2 -> 4.0 ns/char).
 * Each parser owns one instance (one linear memory holding its raw-token table).
 *
 * A text goes in only when it is pure ASCII (checked first, so no term is numbered for a text
 * the Unicode path will take) and is scanned in chunks of at most CHUNK characters cut before a
 * character that can be in no token. The scanner lists the raw tokens it had not seen; each is
 * analysed here (stopwords, stemming, dictionary) in order of first occurrence, as the JS scan
 * does, and the values of the chunk are then completed.
 *
 * GPUINDEX_ASCII_SCAN=js selects the JS scan instead (for A/B benchmarks).
 */
import { APOSTROPHE, isWordChar } from './ascii-terms.js';
import { wasmInstance } from '../../runtime/wasm-instance.js';

/** Must equal CHUNK in indexer/wasm/ascii-scan.ts. */
export const CHUNK = 256 * 1024;
/** Must equal LINE_CAP, KEY_BYTES and MAX_KEYS in indexer/wasm/ascii-scan.ts. */
export const LINE_CAP = CHUNK;
const KEY_BYTES = 1024;
const MAX_KEYS = 32;
const PENDING = 0x80000000;
const STOPWORD = -1;

interface ScanExports {
  memory: { buffer: ArrayBuffer };
  init(slots: number): void;
  scan(n: number, maxLen: number): number;
  jsonLine(n: number, keyCount: number): number;
  scanSpan(start: number, end: number, escaped: number, maxLen: number): number;
  lineInput(): number;
  keyInput(): number;
  stem(n: number): number;
  stemInput(): number;
  spans(): number;
  setValue(slot: number, value: number): void;
  setNextId(id: number): void;
  missKeyStart(): number;
  input(): number;
  outputs(): number;
  misses(): number;
  missTotal(): number;
  slots(): number;
  pool(): number;
  tableSize(): number;
  tableBytes(): number;
}

const SCAN_WASM = 'indexer/scan/wasm/ascii-scan.wasm';

/** Whether parsers use the WebAssembly scanner (the default) or the JS one (GPUINDEX_ASCII_SCAN=js). */
export function wasmScanEnabled(): boolean {
  return process.env.GPUINDEX_ASCII_SCAN !== 'js';
}

/**
 * Where to cut `text` (pure ASCII) into pieces of at most CHUNK characters, each cut before a
 * character that is neither a word character nor an apostrophe (so no token spans it); undefined
 * if some CHUNK characters hold no such place (a token of 256 Ki characters; the caller then
 * takes the JS scan).
 */
export function chunkCuts(text: string): number[] | undefined {
  const cuts: number[] = [];
  let start = 0;
  while (text.length - start > CHUNK) {
    let cut = start + CHUNK;
    while (cut > start) {
      const c = text.charCodeAt(cut);
      if (!isWordChar(c) && c !== APOSTROPHE) break;
      cut--;
    }
    if (cut === start) return undefined;
    cuts.push(cut);
    start = cut;
  }
  cuts.push(text.length);
  return cuts;
}

/**
 * A table that numbers the raw tokens it has not seen itself (a parse worker's local ids): each
 * new one is added to `terms` (LocalTerms), which the caller's other scans (text that is not
 * pure ASCII) number through too. The ASCII `stopwords` are put in the table first (dropped
 * like any stopword), so a new token is never one: no call back to JS for each new token
 * (mail: 127 K of them, ~35 ms of the parse worker).
 */
export interface ScanNumbering {
  terms: { readonly count: number; addRun(src: Uint8Array, from: number, lengths: ArrayLike<number>, n: number): void };
  stopwords: Iterable<string>;
}

export class WasmAsciiTable {
  private readonly x: ScanExports;
  private buffer!: ArrayBuffer;
  private bytes!: Buffer;
  private words!: Int32Array;

  constructor(
    private readonly initialSlots: number,
    private readonly numbering?: ScanNumbering,
  ) {
    this.x = wasmInstance<ScanExports>(SCAN_WASM);
    this.x.init(initialSlots);
    this.views();
    this.putStopwords();
  }

  /** Whether scans number new raw tokens (with numbering, once the stopwords are in). */
  private numbered = false;

  /** With numbering: the stopwords that are ASCII raw tokens, into the table as stopwords. */
  private putStopwords(): void {
    if (!this.numbering) return;
    this.numbered = false;
    const words = [...this.numbering.stopwords].filter((w) => /^[a-z0-9]+$/.test(w));
    const longest = words.reduce((n, w) => Math.max(n, w.length), 1);
    // A scan with pending values, each analysed as a stopword.
    if (words.length > 0) this.scan(words.join(' '), longest, () => STOPWORD, () => {});
    this.numbered = true;
  }

  /** Raw tokens in the table. */
  get size(): number {
    return this.x.tableSize();
  }

  /**
   * Bytes of its raw-token table (slots and key bytes, with the room it grew through): what
   * grows with the vocabulary. Not the chunk buffers (about 1.3 MiB, fixed), nor memory
   * reserved by growth and never touched.
   */
  get tableBytes(): number {
    return this.x.tableBytes();
  }

  clear(): void {
    this.x.init(this.initialSlots);
    this.views();
    if (this.jsonKeys) this.setJsonKeys(this.jsonKeys);
    this.putStopwords();
  }

  private jsonKeys?: readonly string[];

  /**
   * The JSON keys whose values parseJsonLine() locates (kept across clear()). False, with
   * nothing set, if they do not fit (more than 32 keys or 1 KiB of key bytes).
   */
  setJsonKeys(keys: readonly string[]): boolean {
    if (keys.length > MAX_KEYS) return false;
    if (this.x.memory.buffer !== this.buffer) this.views();
    const at = this.x.keyInput();
    let p = at;
    for (const k of keys) {
      const len = Buffer.byteLength(k, 'utf8');
      if (p + 4 + len - at > KEY_BYTES) return false;
      this.words[p >> 2] = len;
      this.bytes.write(k, p + 4, 'utf8');
      p += 4 + ((len + 3) & ~3);
    }
    this.jsonKeys = keys;
    return true;
  }

  /** The spans parseJsonLine() returns, copied out of the module's memory. */
  private readonly spanCopy = new Int32Array(3 * MAX_KEYS);

  /**
   * The JSONL fast path (indexer/jsonl-fast-path.ts): copies `line` in and validates it as a
   * JSON object; returns the spans of the keys set with setJsonKeys (kind, start, end per key;
   * indexer/wasm/json-line.ts), valid until the next call, or undefined where the line must go
   * the ordinary way (longer than LINE_CAP, not an object, anything unusual or invalid).
   *
   * The spans are a copy, not a view of the module's memory: scanning the title may grow the
   * memory (the raw-token table doubling), which detaches every view of it, and the text's
   * span read from a detached view was undefined, so the text was scanned as empty: a document
   * indexed with its title's terms only, in about one build of ten of a 200 MB crawl with 15
   * workers (which worker's table grows during which title depends on timing).
   */
  parseJsonLine(line: Uint8Array): Int32Array | undefined {
    const keys = this.jsonKeys;
    if (keys === undefined || line.length > LINE_CAP) return undefined;
    const x = this.x;
    if (x.memory.buffer !== this.buffer) this.views();
    this.bytes.set(line, x.lineInput());
    if (x.jsonLine(line.length, keys.length) !== 0) return undefined;
    const at = x.spans() >> 2;
    const n = 3 * keys.length;
    this.spanCopy.set(this.words.subarray(at, at + n));
    return this.spanCopy.subarray(0, n);
  }

  /**
   * Scans the string content [start, end) of the line parseJsonLine() took last (ASCII; with
   * `escaped`, two-byte escapes in it), as scan() scans a text.
   */
  scanLineSpan(start: number, end: number, escaped: boolean, maxLength: number, analyse: (raw: string) => number, emit: (values: Int32Array) => void): void {
    const x = this.x;
    if (this.numbered) x.setNextId(this.numbering!.terms.count);
    const n = x.scanSpan(start, end, escaped ? 1 : 0, maxLength);
    this.emitScanned(n, analyse, emit);
  }

  private views(): void {
    this.buffer = this.x.memory.buffer;
    this.bytes = Buffer.from(this.buffer);
    this.words = new Int32Array(this.buffer);
  }

  /**
   * Calls `emit` with the values of text's tokens (stopwords left out), a chunk's values at a
   * time (a view valid during the call). `analyse(raw)` gives the value of a raw token not seen
   * before. Having done nothing, it returns 'not-ascii' for a text that is not pure ASCII and
   * 'uncut' for one it cannot cut into chunks: the caller then takes another path.
   */
  scan(text: string, maxLength: number, analyse: (raw: string) => number, emit: (values: Int32Array) => void): 'scanned' | 'not-ascii' | 'uncut' {
    // A one-byte string of ASCII characters is exactly as long in UTF-8.
    if (Buffer.byteLength(text, 'utf8') !== text.length) return 'not-ascii';
    const cuts = text.length <= CHUNK ? [text.length] : chunkCuts(text);
    if (cuts === undefined) return 'uncut';
    let start = 0;
    for (const end of cuts) {
      this.scanChunk(text, start, end, maxLength, analyse, emit);
      start = end;
    }
    return 'scanned';
  }

  /**
   * scan() of ASCII bytes as they are (a small .txt file's): no string made of them, nor written
   * back. False, having done nothing, for more than one chunk's bytes (scan() cuts those).
   */
  scanAsciiBytes(bytes: Uint8Array, maxLength: number, analyse: (raw: string) => number, emit: (values: Int32Array) => void): boolean {
    if (bytes.length > CHUNK) return false;
    const x = this.x;
    if (x.memory.buffer !== this.buffer) this.views();
    this.bytes.set(bytes, x.input());
    if (this.numbered) x.setNextId(this.numbering!.terms.count);
    this.emitScanned(x.scan(bytes.length, maxLength), analyse, emit);
    return true;
  }

  private scanChunk(text: string, start: number, end: number, maxLength: number, analyse: (raw: string) => number, emit: (values: Int32Array) => void): void {
    const x = this.x;
    if (x.memory.buffer !== this.buffer) this.views();
    const at = x.input();
    // Latin-1 writes the string's bytes as they are (ASCII here).
    this.bytes.write(start === 0 && end === text.length ? text : text.slice(start, end), at, 'latin1');
    if (this.numbered) x.setNextId(this.numbering!.terms.count);
    this.emitScanned(x.scan(end - start, maxLength), analyse, emit);
  }

  /** Completes the n values the last scan wrote (analysing its misses) and emits them. */
  private emitScanned(n: number, analyse: (raw: string) => number, emit: (values: Int32Array) => void): void {
    const x = this.x;
    if (x.memory.buffer !== this.buffer) this.views();
    const words = this.words;
    const out = x.outputs() >> 2;
    const missCount = x.missTotal();
    if (missCount === 0) {
      emit(words.subarray(out, out + n));
      return;
    }
    if (this.numbered) {
      this.takeNumbered(missCount);
      emit(words.subarray(out, out + n));
      return;
    }
    const values = this.resolve(missCount, analyse);
    // Replace pending values; drop those that turned out to be stopwords.
    let kept = out;
    for (let i = out; i < out + n; i++) {
      let v = words[i]!;
      if (v < 0) {
        v = values[v & ~PENDING]!;
        if (v === STOPWORD) continue;
      }
      words[kept++] = v;
    }
    emit(words.subarray(out, kept));
  }

  /** With numbering: the chunk's new raw tokens (numbered in order, keys one after another in the pool), added to `terms`. */
  private takeNumbered(missCount: number): void {
    const x = this.x;
    const lengths = x.misses() >> 2;
    this.numbering!.terms.addRun(this.bytes, x.pool() + x.missKeyStart(), this.words.subarray(lengths, lengths + missCount), missCount);
  }

  /** Analyses the chunk's new raw tokens, in order of first occurrence, and stores their values. */
  private resolve(missCount: number, analyse: (raw: string) => number): Int32Array {
    const x = this.x;
    const values = new Int32Array(missCount);
    const misses = x.misses() >> 2;
    const slots = x.slots() >> 2;
    const pool = x.pool();
    try {
      for (let k = 0; k < missCount; k++) {
        const slot = this.words[misses + k]!;
        const b = slots + (slot << 2);
        const offset = pool + this.words[b + 2]!;
        const raw = this.bytes.toString('latin1', offset, offset + this.words[b + 1]!);
        const value = analyse(raw);
        if (value !== STOPWORD && (value < 0 || value >= PENDING)) throw new Error(`gpuindex: term id ${value} out of the scanner's range`);
        values[k] = value;
        x.setValue(slot, value);
      }
    } catch (e) {
      // Pending values must never be read as values: start over with an empty table.
      this.clear();
      throw e;
    }
    return values;
  }
}

/**
 * natural's Porter stemmer for lowercase ASCII tokens, in WebAssembly (indexer/wasm/porter.ts):
 * the main thread's stemmer of the workers' raw tokens (BatchRemapper), so stemming costs no JS
 * compilation. Its own instance of the scanner's module (a small table).
 */
export class WasmStemmer {
  private readonly x: ScanExports;
  private buffer!: ArrayBuffer;
  private bytes!: Buffer;

  constructor() {
    this.x = wasmInstance<ScanExports>(SCAN_WASM);
    this.x.init(16);
  }

  /**
   * The term of the token whose bytes (UTF-8) are src[start, end) (a RawTokenList's) when they
   * are all [a-z0-9]: Porter-stemmed when it has a letter and at most 255 characters, else as it
   * is, as Tokenizer.analyzeToken does; undefined for any other token. The bytes go in as they
   * are: no string of the token is made.
   */
  stemRange(src: Uint8Array, start: number, end: number): string | undefined {
    const x = this.x;
    const n = end - start;
    if (n > 255) {
      const token = Buffer.from(src.buffer, src.byteOffset + start, n).toString('latin1');
      return /^[a-z0-9]+$/.test(token) ? token : undefined;
    }
    if (x.memory.buffer !== this.buffer) {
      this.buffer = x.memory.buffer;
      this.bytes = Buffer.from(this.buffer);
    }
    const bytes = this.bytes;
    const at = x.stemInput();
    for (let i = 0; i < n; i++) bytes[at + i] = src[start + i]!;
    const m = x.stem(n);
    return m < 0 ? undefined : bytes.toString('latin1', at, at + m);
  }
}
