/**
 * Document -> TermIds for the parse (a worker's, or the in-process parse of API documents):
 * the tokenizer's analysis of each distinct raw token, cached, through the WebAssembly scanner
 * for pure-ASCII text. Its own module so that parse workers load nothing of the sort stage.
 */
import { isAscii } from 'node:buffer';
import type { SourceDocument } from '../corpus/index.js';
import type { Tokenizer } from '../analysis/tokenizer.js';
import { AsciiTermTable, PARSER_TABLE_SLOTS, scanAscii } from './ascii-terms.js';
import { grown } from '../../runtime/grown.js';
import type { TermDictionary } from '../fill/dictionary.js';
import { scanUnicodeTerms, UnicodeTermTable } from './unicode-terms.js';
import { CHUNK, WasmAsciiTable, wasmScanEnabled } from './wasm-ascii-table.js';
import { RawTokenList, type RawTokenBytes } from './raw-token-list.js';
import { BigMap } from '../../runtime/big-map.js';

/** Cached analyses beyond this many distinct raw tokens are dropped (and recomputed on demand). */
const RAW_CACHE_LIMIT = 1 << 22;
/**
 * Text needing the Unicode pattern goes through the tokenizer's regex until a thread has scanned
 * this many UTF-16 units of it, then through scanUnicodeTerms. The hand-written scan is 1.5-3x
 * faster once compiled, but runs in V8's interpreter first: on mail's 278 K units of such text
 * it took 42-65 ms cold against the regex's 22-41 (11 against 15-24 warm), and a crawl with
 * little of it (mail: 53 of 6,046 messages) would pay that warm-up for nothing. Past ~1 M units
 * the saving has paid for it (multilingual: 34 M units; 2-core machine).
 */
export const UNICODE_TABLE_AFTER_UNITS = 1 << 20;
/**
 * A text that is not pure ASCII and at least this long is cut into ASCII pieces, which take the
 * WebAssembly scanner, and the words around its non-ASCII characters, which take the Unicode
 * analysis (addIslands). Mail's 59 such texts (482 K characters) hold 29 K characters of such
 * words: the rest went through NFKC, the tokenizer's regex and a Map per token, ~50 ms of the
 * parse worker.
 */
export const ISLANDS_FROM_CHARS = 1024;
/** ASCII between two such words shorter than this stays with them (a scanner call costs more). */
const MIN_ASCII_PIECE = 64;
const NON_ASCII_CHAR = /[^\x00-\x7f]/g;
const ASCII_SPACE = /[ \t\n\r]/g;
const isAsciiSpace = (c: number): boolean => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
const STOPWORD = -1;

/** asciiEnd keeps its view of a text's buffer for the next text only up to this size. */
const WORDS_KEPT_BYTES = 4 << 20;

/** The first ASCII whitespace in `text` from `i`, or its length. */
function nextAsciiSpace(text: Uint8Array, i: number): number {
  const n = text.length;
  while (i < n && !isAsciiSpace(text[i]!)) i++;
  return i;
}

/** The BMP character whose UTF-8 starts at text[i] (not ASCII), or -1: beyond the BMP, cut, or not UTF-8. */
function bmpCharAt(text: Uint8Array, i: number): number {
  const n = text.length;
  const b = text[i]!;
  if (b >= 0xc2 && b < 0xe0 && i + 1 < n && (text[i + 1]! & 0xc0) === 0x80) return ((b & 0x1f) << 6) | (text[i + 1]! & 0x3f);
  if (b >= 0xe0 && b < 0xf0 && i + 2 < n && (text[i + 1]! & 0xc0) === 0x80 && (text[i + 2]! & 0xc0) === 0x80) {
    const c = ((b & 0x0f) << 12) | ((text[i + 1]! & 0x3f) << 6) | (text[i + 2]! & 0x3f);
    return c < 0x800 || (c >= 0xd800 && c <= 0xdfff) ? -1 : c;
  }
  return -1;
}

/**
 * The id a raw token (not yet seen by this inverter's caches) stands for in the TermIds it
 * emits, or STOPWORD. Called once per distinct raw token, in order of first occurrence.
 */
export type RawTokenNumbering = (raw: string) => number;

/** Raw token -> its term's TermId in `dictionary` (stopword test, stemming, lookup): the in-process parse. */
export function analysedTermIds(tokenizer: Tokenizer, dictionary: TermDictionary): RawTokenNumbering {
  return (raw) => {
    const term = tokenizer.analyzeToken(raw);
    return term === null ? STOPWORD : dictionary.idOf(term);
  };
}

/**
 * A parse worker's local terms: its raw tokens numbered 0, 1, 2, ... in order of first sight,
 * and the bytes of those not sent yet (RawTokenList). A token goes to the main thread with the
 * batch that uses it first and is not kept here; the scanner's new tokens go in as a run of the
 * bytes it has (addRun), with no string made.
 */
export class LocalTerms {
  /** Local ids given so far: the next one. */
  count = 0;
  private readonly unsent = new RawTokenList();

  add(raw: string): number {
    this.unsent.pushString(raw);
    return this.count++;
  }

  /** `n` new raw tokens whose bytes lie one after another in `src` from `from`, numbered in order. */
  addRun(src: Uint8Array, from: number, lengths: ArrayLike<number>, n: number): void {
    this.unsent.pushRun(src, from, lengths, n);
    this.count += n;
  }

  /** The raw tokens of local ids count - n .. count - 1, added since the last call. */
  takeUnsent(): RawTokenBytes {
    return this.unsent.take();
  }

  /** takeUnsent in place, for this thread: `use` reads the tokens (no copy), then the list empties. */
  useUnsent(use: (tokens: RawTokenList) => void): void {
    use(this.unsent);
    this.unsent.clear();
  }

  /**
   * Numbers from 0 again, once every raw token given is analysed (takeUnsent) and the scanner
   * has forgotten them (DocumentInverter.forgetRawTokens): a worker's next lexicon generation.
   */
  restart(): void {
    if (this.unsent.take().ends.length > 0) throw new Error('local terms: restart with raw tokens not taken');
    this.count = 0;
  }
}

/**
 * Raw token -> a new local id (stopwords dropped): a parse worker's numbering. The worker's
 * caches see each raw token once, so no lookup is needed; stemming and the term dictionary are
 * left to the main thread (BatchRemapper), which does them once for all workers instead of once
 * in each (and off the worker, which bounds the build).
 */
export function rawTokenIds(tokenizer: Tokenizer, terms: LocalTerms): RawTokenNumbering {
  return (raw) => (tokenizer.isStopword(raw) ? STOPWORD : terms.add(raw));
}
const NON_ASCII = /[^\x00-\x7f]/g;
/** The ASCII character that stands in for a non-ASCII one of normalized text that needs no Unicode scan. */
const asciiStandIn = (c: string): string => (c === '\u2019' ? "'" : ' ');

const UNKNOWN = 0;
const NOT_SEPARATOR = 1;
/** Punctuation, symbols, spaces and format characters: no letter, digit or mark (which compose). */
const SEPARATOR_CATEGORY = /^[\p{P}\p{S}\p{Z}\p{Cf}]$/u;

/**
 * The ASCII stand-in (a space, or an apostrophe for U+2019) of BMP character `c` where it is a
 * separator the Unicode analysis would give the same tokens for: punctuation, a symbol, a space
 * or a format character whose normalized form (NFKC, lowercase) is itself or a space, with
 * nothing of a token in it; else NOT_SEPARATOR (surrogates, letters, marks, and characters such
 * as U+2122 or U+2026 that NFKC makes ASCII).
 */
function asciiSeparator(tokenizer: Tokenizer, code: number): number {
  if (code >= 0xd800 && code <= 0xdfff) return NOT_SEPARATOR;
  const c = String.fromCharCode(code);
  if (!SEPARATOR_CATEGORY.test(c)) return NOT_SEPARATOR;
  const normalized = tokenizer.normalizeNonAscii(c);
  if (normalized === ' ') return 0x20;
  if (normalized !== c || tokenizer.needsUnicodeScan(normalized)) return NOT_SEPARATOR;
  return asciiStandIn(c).charCodeAt(0);
}

/**
 * Turns a document into its TermIds (title first, titleWeight times over, then text) in a reusable buffer. The
 * analysis of each distinct raw token (stopword test, stemming, dictionary lookup) is cached
 * as one raw token -> TermId entry: pure-ASCII text goes through scanAscii's in-place table
 * (no string allocated for a token seen before), other text through the tokenizer and a Map
 * at first, then through scanUnicodeTerms' in-place table (UNICODE_TABLE_AFTER_UNITS).
 */
export class DocumentInverter {
  private termIds = new Uint32Array(4096);
  private length = 0;
  /** Text that needs the Unicode pattern, until UNICODE_TABLE_AFTER_UNITS: the regex scan and a Map. */
  private readonly rawToId = new BigMap<string, number>();
  /** UTF-16 units of such text scanned so far. */
  private unicodeUnits = 0;
  /** Then: scanUnicodeTerms (unicode-terms.ts), made on first use. */
  private unicodeTable: UnicodeTermTable | undefined;
  private readonly bigrams: boolean;
  /** Pure-ASCII text: the WebAssembly scanner, unless GPUINDEX_ASCII_SCAN=js. */
  private readonly wasmTable: WasmAsciiTable | undefined;
  /** Normalized text (and all ASCII text with GPUINDEX_ASCII_SCAN=js): the JS scan. */
  private readonly asciiTable: AsciiTermTable;

  /** The id of a raw token not seen before (see RawTokenNumbering). */
  private readonly analyse: RawTokenNumbering;
  /** Times each title term is emitted (the tokenizer's titleWeight): BM25F's field weight folded into tf and length. */
  private readonly titleWeight: number;

  /**
   * `numbering`: how a raw token not seen before gets its id; a LocalTerms numbers them as a
   * parse worker does (rawTokenIds), and the WebAssembly scanner then numbers its own the same
   * way (ScanNumbering). `unicodeTableAfterUnits`: see UNICODE_TABLE_AFTER_UNITS (tests set 0,
   * or a few units to cross it); `islandsFromChars`: see ISLANDS_FROM_CHARS; `bytesChunk`: the
   * longest piece scanUtf8 hands the scanner (tests make it short to cut texts often).
   */
  constructor(
    private readonly tokenizer: Tokenizer,
    numbering: RawTokenNumbering | LocalTerms,
    private readonly unicodeTableAfterUnits = UNICODE_TABLE_AFTER_UNITS,
    private readonly islandsFromChars = ISLANDS_FROM_CHARS,
    private readonly bytesChunk = CHUNK,
  ) {
    this.bigrams = tokenizer.options.cjk === 'bigram';
    this.titleWeight = tokenizer.options.titleWeight ?? 1;
    const local = numbering instanceof LocalTerms ? numbering : undefined;
    this.analyse = local ? rawTokenIds(tokenizer, local) : (numbering as RawTokenNumbering);
    this.wasmTable = wasmScanEnabled() ? new WasmAsciiTable(PARSER_TABLE_SLOTS, local && { terms: local, stopwords: tokenizer.stopwords }) : undefined;
    this.asciiTable = new AsciiTermTable(this.wasmTable ? undefined : PARSER_TABLE_SLOTS);
  }

  private readonly push = (id: number): void => {
    if (id === STOPWORD) return;
    if (this.length === this.termIds.length) this.grow(this.length + 1);
    this.termIds[this.length++] = id;
  };

  private readonly emitRaw = (raw: string): void => {
    let id = this.rawToId.get(raw);
    if (id === undefined) {
      id = this.analyse(raw);
      if (this.rawToId.size >= RAW_CACHE_LIMIT) this.rawToId.clear();
      this.rawToId.set(raw, id);
    }
    this.push(id);
  };

  private readonly pushAll = (ids: Int32Array): void => {
    const need = this.length + ids.length;
    if (need > this.termIds.length) this.grow(need);
    this.termIds.set(ids, this.length);
    this.length = need;
  };

  /** Room for `need` TermIds, keeping the first `length`. */
  private grow(need: number): void {
    this.termIds = grown(this.termIds, need, this.length);
  }

  /** Whether pure-ASCII text takes the WebAssembly scanner (not with GPUINDEX_ASCII_SCAN=js). */
  get wasmScan(): boolean {
    return this.wasmTable !== undefined;
  }

  /**
   * Forgets every raw token seen, so that the next ones are numbered afresh (LocalTerms.restart):
   * a parse worker starting a new lexicon generation. Only between documents.
   */
  forgetRawTokens(): void {
    this.rawToId.clear();
    this.asciiTable.clear();
    this.unicodeTable?.clear();
    this.wasmTable?.clear();
  }

  /** Bytes of the WebAssembly scanner's raw-token table (0 without it) and of the Unicode one. */
  get scanTableBytes(): number {
    return (this.wasmTable?.tableBytes ?? 0) + (this.unicodeTable?.byteLength ?? 0);
  }

  /** `mayClear`: false while a JSON line sits in the scanner (clear() would drop it). */
  private add(text: string, mayClear = true): void {
    if (this.asciiTable.size >= RAW_CACHE_LIMIT) this.asciiTable.clear();
    const start = this.length;
    let knownNotAscii = false;
    if (this.wasmTable !== undefined) {
      if (mayClear && this.wasmTable.size >= RAW_CACHE_LIMIT) this.wasmTable.clear();
      const result = this.wasmTable.scan(text, this.tokenizer.maxTokenLength, this.analyse, this.pushAll);
      if (result === 'scanned') return;
      // 'uncut' (pure ASCII, a 256 Ki-character token) goes to the JS scan below.
      knownNotAscii = result === 'not-ascii';
      if (knownNotAscii && this.addWithAsciiSeparators(text)) return;
      if (knownNotAscii && text.length >= this.islandsFromChars) return this.addIslands(text);
    }
    if (!knownNotAscii && scanAscii(text, this.asciiTable, this.analyse, this.push, this.tokenizer.maxTokenLength)) return;
    // Not ASCII: drop what the ASCII scan emitted.
    this.length = start;
    this.addNonAscii(text);
  }

  /**
   * Text whose non-ASCII characters are all separators (asciiSeparator: no-break and other
   * spaces, dashes, curly quotes, pilcrows, arrows... the usual non-ASCII of HTML and mail):
   * written as ASCII bytes with each one's stand-in and scanned by the WebAssembly scanner in one
   * call, instead of being cut into ASCII pieces and normalized islands. The same tokens as the
   * Unicode analysis: such a character is its own NFKC form (or a space), lowercase, no part of a
   * token, and composes with nothing. False (nothing emitted) at the first other character.
   */
  private addWithAsciiSeparators(text: string): boolean {
    const n = text.length;
    if (n > CHUNK) return false;
    if (this.standIns.length < n) this.standIns = new Uint8Array(Math.max(n, this.standIns.length * 2));
    const bytes = this.standIns;
    for (let i = 0; i < n; i++) {
      const c = text.charCodeAt(i);
      if (c < 0x80) {
        bytes[i] = c;
        continue;
      }
      const standIn = this.standInOf(c);
      if (standIn === NOT_SEPARATOR) return false;
      bytes[i] = standIn;
    }
    return this.wasmTable!.scanAsciiBytes(bytes.subarray(0, n), this.tokenizer.maxTokenLength, this.analyse, this.pushAll);
  }
  /** BMP character `c`'s ASCII stand-in as a separator, or NOT_SEPARATOR (asciiSeparator, remembered). */
  private standInOf(c: number): number {
    const standIn = this.separators[c]!;
    return standIn !== UNKNOWN ? standIn : (this.separators[c] = asciiSeparator(this.tokenizer, c));
  }
  /** Each BMP character's ASCII stand-in as a separator, NOT_SEPARATOR, or UNKNOWN until first seen. */
  private readonly separators = new Uint8Array(0x10000);
  private standIns = new Uint8Array(0);

  /** Pure-ASCII text: the WebAssembly scanner, or the JS scan for text it cannot cut. */
  private addAscii(text: string): void {
    if (this.wasmTable?.scan(text, this.tokenizer.maxTokenLength, this.analyse, this.pushAll) === 'scanned') return;
    scanAscii(text, this.asciiTable, this.analyse, this.push, this.tokenizer.maxTokenLength);
  }

  /**
   * Text that is not pure ASCII, cut at ASCII whitespace into ASCII pieces (addAscii) and the
   * words holding its non-ASCII characters (addNonAscii), taken in order: the same tokens as
   * the whole text's Unicode analysis, since no token spans whitespace, and normalization
   * (NFKC, lowercasing with its final-sigma rule) looks no further than the whitespace around a
   * word.
   */
  private addIslands(text: string): void {
    /** Where the ASCII not yet added starts, and the pending island [islandStart, islandEnd). */
    let ascii = 0;
    let islandStart = -1;
    let islandEnd = 0;
    NON_ASCII_CHAR.lastIndex = 0;
    for (let m = NON_ASCII_CHAR.exec(text); m !== null; m = NON_ASCII_CHAR.exec(text)) {
      let start = m.index;
      while (start > islandEnd && !isAsciiSpace(text.charCodeAt(start - 1))) start--;
      ASCII_SPACE.lastIndex = m.index;
      const end = ASCII_SPACE.exec(text)?.index ?? text.length;
      if (islandStart >= 0 && start - islandEnd < MIN_ASCII_PIECE) {
        islandEnd = end;
      } else {
        if (islandStart >= 0) {
          this.addNonAscii(text.slice(islandStart, islandEnd));
          ascii = islandEnd;
        }
        if (start > ascii) this.addAscii(text.slice(ascii, start));
        islandStart = start;
        islandEnd = end;
      }
      NON_ASCII_CHAR.lastIndex = end;
    }
    this.addNonAscii(text.slice(islandStart, islandEnd));
    if (islandEnd < text.length) this.addAscii(text.slice(islandEnd));
  }

  /**
   * Text that is not pure ASCII: normalized text whose non-ASCII characters only separate tokens
   * still takes the scanner, the rest goes the Unicode way.
   */
  private addNonAscii(text: string): void {
    const normalized = this.tokenizer.normalizeNonAscii(text);
    if (!this.tokenizer.needsUnicodeScan(normalized)) return this.addNormalized(normalized);
    if (this.unicodeUnits < this.unicodeTableAfterUnits) {
      this.unicodeUnits += normalized.length;
      return this.tokenizer.tokenizeUnicodeRaw(normalized, this.emitRaw);
    }
    if (this.unicodeTable === undefined) {
      this.unicodeTable = new UnicodeTermTable();
      this.rawToId.clear();
    } else if (this.unicodeTable.size >= RAW_CACHE_LIMIT) this.unicodeTable.clear();
    scanUnicodeTerms(normalized, this.unicodeTable, this.bigrams, this.tokenizer.maxTokenLength, this.analyse, this.push);
  }

  /**
   * Normalized text that needs no Unicode scan (Tokenizer.needsUnicodeScan): its non-ASCII characters only separate tokens,
   * except U+2019, which joins like an apostrophe. Written as ASCII (a space, an apostrophe) it
   * has the same tokens and takes the WebAssembly scanner too.
   */
  private addNormalized(normalized: string): void {
    const maxLength = this.tokenizer.maxTokenLength;
    if (this.wasmTable?.scan(normalized.replace(NON_ASCII, asciiStandIn), maxLength, this.analyse, this.pushAll) === 'scanned') return;
    scanAscii(normalized, this.asciiTable, this.analyse, this.push, maxLength, true);
  }

  /**
   * The JSONL fast path (jsonl-fast-path.ts) inverts a document piece by piece, straight from
   * the line in the WebAssembly scanner: begin() (the scanner, or undefined without it), then
   * addLineSpan() / addText() for the title and text pieces in order, then pieces().
   */
  begin(): WasmAsciiTable | undefined {
    this.length = 0;
    this.titleLength = 0;
    if (this.wasmTable !== undefined && this.wasmTable.size >= RAW_CACHE_LIMIT) this.wasmTable.clear();
    return this.wasmTable;
  }

  /** A pure-ASCII string of the line begin()'s scanner holds (escaped: with two-byte escapes). */
  addLineSpan(start: number, end: number, escaped: boolean): void {
    this.wasmTable!.scanLineSpan(start, end, escaped, this.tokenizer.maxTokenLength, this.analyse, this.pushAll);
  }

  /** A decoded piece (non-ASCII text, or one with \u escapes): the ordinary analysis. */
  addText(text: string): void {
    this.add(text, false);
  }

  /**
   * The title's TermIds (those emitted since `from`, the first piece of the document) emitted titleWeight − 1 more times, one
   * copy after another: each title term then counts titleWeight times in its tf and in the
   * document's length, the weighted tf and length of BM25F, through the pipeline unchanged.
   */
  weightTitle(from: number): void {
    const n = this.length - from;
    this.titleLength = n;
    if (n === 0 || this.titleWeight === 1) return;
    const need = this.length + n * (this.titleWeight - 1);
    if (need > this.termIds.length) this.grow(need);
    for (let c = 1; c < this.titleWeight; c++) {
      this.termIds.copyWithin(this.length, from, from + n);
      this.length += n;
    }
  }

  /** The title's terms in the document inverted last (the first of its titleWeight copies): --positions. */
  titleLength = 0;

  /** The TermIds of the pieces added since begin(): a view valid until the next document. */
  pieces(): Uint32Array {
    return this.termIds.subarray(0, this.length);
  }

  /**
   * invert() of a document whose text is given as UTF-8 bytes (an HTML page's extraction, a text
   * file; valid UTF-8), with no string made of its ASCII and separator characters (scanUtf8): the same
   * TermIds as invert() of the decoded text. A view of them, or undefined where the text must be
   * decoded and take invert() (which starts afresh): no WebAssembly scanner, or a stretch of a
   * chunk's length with no ASCII whitespace.
   */
  invertUtf8(title: string, text: Uint8Array): Uint32Array | undefined {
    const table = this.wasmTable;
    if (table === undefined) return undefined;
    this.length = 0;
    this.titleLength = 0;
    if (title) {
      this.add(title);
      this.weightTitle(0);
    }
    // As add() does before a text (after the title, which may use the stand-ins' buffer too).
    if (this.asciiTable.size >= RAW_CACHE_LIMIT) this.asciiTable.clear();
    if (table.size >= RAW_CACHE_LIMIT) table.clear();
    if (!this.scanUtf8(table, text)) return undefined;
    return this.termIds.subarray(0, this.length);
  }

  /**
   * UTF-8 `text` into the scanner in pieces cut at ASCII whitespace, each at most a chunk: ASCII
   * as it is and separators as their one-byte stand-ins (addWithAsciiSeparators' rule); the
   * words around any other character (a letter or mark beyond ASCII, a symbol NFKC changes, a
   * character beyond the BMP) decoded and analysed as addIslands analyses its islands. The same
   * tokens as the decoded text's analysis, since no token spans ASCII whitespace and
   * normalization looks no further. A page with a few accented names among 100 KB of English
   * thus takes the scanner for all but those words. False where a chunk's length of text holds
   * no ASCII whitespace (the scan may have emitted part of it).
   */
  private scanUtf8(table: WasmAsciiTable, text: Uint8Array): boolean {
    const n = text.length;
    const chunk = this.bytesChunk;
    const maxLength = this.tokenizer.maxTokenLength;
    if (n <= chunk && isAscii(text)) {
      table.scanAsciiBytes(text, maxLength, this.analyse, this.pushAll);
      return true;
    }
    const cap = Math.min(n, chunk);
    if (this.standIns.length < cap) this.standIns = new Uint8Array(Math.max(cap, this.standIns.length * 2));
    const out = this.standIns;
    const scanPiece = (length: number): void => void table.scanAsciiBytes(out.subarray(0, length), maxLength, this.analyse, this.pushAll);
    // out[0, o) holds the current piece's stand-ins, up to text[i]; its last ASCII whitespace
    // ends at text[spaceIn] and out[spaceOut] (0: none yet, and spaceIn is where the piece starts).
    let o = 0;
    let spaceIn = 0;
    let spaceOut = 0;
    let i = 0;
    while (i < n) {
      if (o === chunk) {
        // A chunk's worth: scan it up to its last whitespace, keep the rest for the next piece.
        if (spaceOut === 0) return false;
        scanPiece(spaceOut);
        out.copyWithin(0, spaceOut, o);
        o -= spaceOut;
        spaceOut = 0;
      }
      const b = text[i]!;
      if (b < 0x80) {
        // A run of ASCII, copied at once (most of a page's text), and its last whitespace.
        const j = this.asciiEnd(text, i + 1, Math.min(n, i + chunk - o));
        out.set(text.subarray(i, j), o);
        for (let k = j - 1; k >= i; k--) {
          if (isAsciiSpace(text[k]!)) {
            spaceIn = k + 1;
            spaceOut = o + (k + 1 - i);
            break;
          }
        }
        o += j - i;
        i = j;
        continue;
      }
      const c = bmpCharAt(text, i);
      const standIn = c < 0 ? NOT_SEPARATOR : this.standInOf(c);
      if (standIn !== NOT_SEPARATOR) {
        out[o++] = standIn;
        i += c < 0x800 ? 2 : 3;
        continue;
      }
      // An island, from the piece's last whitespace: what comes before it is a piece of its own.
      if (spaceOut > 0) scanPiece(spaceOut);
      const end = this.islandEnd(text, i);
      this.addNonAscii(Buffer.from(text.buffer, text.byteOffset + spaceIn, end - spaceIn).toString('utf8'));
      i = end;
      o = 0;
      spaceIn = end;
      spaceOut = 0;
    }
    if (o > 0) scanPiece(o);
    return true;
  }

  /**
   * The first byte of text[i, end) that is not ASCII, or end: four bytes at a time where they
   * are aligned (a page's text between its few other characters runs for hundreds of bytes).
   */
  private asciiEnd(text: Uint8Array, i: number, end: number): number {
    const at = text.byteOffset;
    while (i < end && ((at + i) & 3) !== 0) {
      if (text[i]! >= 0x80) return i;
      i++;
    }
    if (i >= end) return end;
    let words = this.words;
    if (words.buffer !== text.buffer) {
      words = new Uint32Array(text.buffer, 0, text.buffer.byteLength >> 2);
      // Not a large buffer (a 100 MB record's): the view would hold it past its text.
      if (text.buffer.byteLength <= WORDS_KEPT_BYTES) this.words = words;
    }
    let w = (at + i) >> 2;
    const wordsEnd = (at + end) >> 2;
    while (w < wordsEnd && (words[w]! & 0x80808080) === 0) w++;
    i = (w << 2) - at;
    while (i < end && text[i]! < 0x80) i++;
    return i;
  }
  /** A view of the words of the last text's buffer (asciiEnd). */
  private words: Uint32Array<ArrayBufferLike> = new Uint32Array(0);

  /**
   * Where the island holding the character at text[i] ends: at the ASCII whitespace after its
   * word, or after a later word of the same kind that starts less than MIN_ASCII_PIECE bytes on
   * (addIslands' rule: a scanner call costs more than so short a piece).
   */
  private islandEnd(text: Uint8Array, i: number): number {
    const n = text.length;
    let end = nextAsciiSpace(text, i);
    for (let j = end; j < n && j < end + MIN_ASCII_PIECE; ) {
      if (text[j]! < 0x80) {
        j++;
        continue;
      }
      const c = bmpCharAt(text, j);
      if (c < 0 || this.standInOf(c) === NOT_SEPARATOR) {
        end = nextAsciiSpace(text, j);
        j = end;
      } else j += c < 0x800 ? 2 : 3;
    }
    return end;
  }

  /** Returns a view of the document's TermIds, valid until the next call. */
  invert(doc: Pick<SourceDocument, 'title' | 'text'>): Uint32Array {
    this.length = 0;
    this.titleLength = 0;
    if (doc.title) {
      this.add(doc.title);
      this.weightTitle(0);
    }
    this.add(doc.text);
    return this.termIds.subarray(0, this.length);
  }
}
