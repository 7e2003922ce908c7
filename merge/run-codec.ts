/**
 * The body of a run file (runs.ts): a sorted block's (term key, document) pairs as term groups of
 * varints. Eight bytes a pair were written by the sort stage and read back by the merge: on the
 * 64-core machine copying the 8 GB crawl's 5.5 GB of runs out of the page cache was a merge
 * thread's first cost. A group is
 *
 *   varint(key - the previous group's key)      the first group: its key
 *   varint(pairs in the group)
 *   varint(document - the previous document)    for each pair; the first from 0
 *
 * Documents ascend within a key, so every gap is >= 0 (0: one more occurrence in that document).
 *
 * Samples: the start of group 0 and of the first group at or past every
 * sampleStrideOf(count)-th pair, as (key, pair index, body byte offset): the merge cuts runs into
 * term ranges from them (term-ranges.ts) with one read a run, and starts a cursor at a group.
 */

/** Key samples a run has at most. */
const MAX_KEY_SAMPLES = 4096;

/** Pairs between two sample marks of a run of `count` pairs: a power of two, from the count alone (1: every group of a small run). */
export function sampleStrideOf(count: number): number {
  let stride = 1;
  while (Math.ceil(count / stride) > MAX_KEY_SAMPLES) stride *= 2;
  return stride;
}

/** u32 words a sample takes: key, pair index, body byte offset (low, high 32 bits). */
export const SAMPLE_WORDS = 4;

/** Body bytes an encoder hands out at a time (its buffer, reused). */
const PIECE_BYTES = 1 << 20;

/** Where a group starts in a run: the pair index, the body byte offset and the key of the group before it (0 for the first). */
export interface GroupStart {
  pair: number;
  byte: number;
  keyBefore: number;
}

/**
 * Encodes sorted pairs (`sorted` holds 2 * count u32: key, document, ascending) piece by piece:
 * next() returns the body's next bytes in a buffer reused by the following call, undefined at
 * the end; then `samples` and `bodyBytes` hold the run's samples and length.
 */
export class RunBodyEncoder {
  private readonly out = new Uint8Array(PIECE_BYTES + 32);
  private readonly stride: number;
  private readonly sampleWords: number[] = [];
  private pair = 0;
  /** The end of the current group (exclusive); pair < groupEnd while its documents are written. */
  private groupEnd = 0;
  private prevKey = 0;
  private prevDoc = 0;
  private nextMark = 0;
  bodyBytes = 0;

  constructor(
    private readonly sorted: Uint32Array,
    private readonly count: number,
  ) {
    if (sorted.length < 2 * count) throw new RangeError(`${count} pairs need ${2 * count} words, the block has ${sorted.length}`);
    this.stride = sampleStrideOf(count);
  }

  next(): Uint8Array | undefined {
    const s = this.sorted;
    const out = this.out;
    const count = this.count;
    let pos = 0;
    let p = this.pair;
    let end = this.groupEnd;
    let doc = this.prevDoc;
    while (pos < PIECE_BYTES) {
      if (p === end) {
        if (p === count) break;
        // A new group: its pairs, then its header.
        const key = s[2 * p]!;
        let e = p + 1;
        while (e < count && s[2 * e] === key) e++;
        if (key < this.prevKey || (p > 0 && key === this.prevKey)) throw new Error(`run pairs out of order: key ${key} after ${this.prevKey}`);
        if (p >= this.nextMark) {
          const byte = this.bodyBytes + pos;
          this.sampleWords.push(key, p, byte % 2 ** 32, Math.floor(byte / 2 ** 32));
          this.nextMark = (Math.floor(p / this.stride) + 1) * this.stride;
        }
        pos = putVarint(out, pos, key - this.prevKey);
        pos = putVarint(out, pos, e - p);
        this.prevKey = key;
        end = e;
        doc = 0;
      }
      // The group's documents, while the piece has room.
      while (p < end && pos < PIECE_BYTES) {
        const d = s[2 * p + 1]!;
        const gap = d - doc;
        if (gap < 0) throw new Error(`run pairs out of order: document ${d} after ${doc} under key ${this.prevKey}`);
        if (gap < 0x80) out[pos++] = gap;
        else pos = putVarint(out, pos, gap);
        doc = d;
        p++;
      }
    }
    this.pair = p;
    this.groupEnd = end;
    this.prevDoc = doc;
    this.bodyBytes += pos;
    return pos === 0 ? undefined : out.subarray(0, pos);
  }

  /** The samples as the file's bytes (SAMPLE_WORDS u32 a sample), once next() has returned undefined. */
  samples(): Uint8Array {
    return new Uint8Array(Uint32Array.from(this.sampleWords).buffer);
  }

  get sampleCount(): number {
    return this.sampleWords.length / SAMPLE_WORDS;
  }
}

/** Writes `v` (a u32) as a varint at `pos`; returns the position after it. */
function putVarint(out: Uint8Array, pos: number, v: number): number {
  while (v >= 0x80) {
    out[pos++] = (v & 0x7f) | 0x80;
    v >>>= 7;
  }
  out[pos++] = v;
  return pos;
}

/** Reads body bytes [position, position + into.length) of the run into `into`; returns how many it got. */
export type BodyRead = (into: Uint8Array, position: number) => number;

/**
 * Decodes a run body from a group start into pairs, reading `read` in buffer-sized steps up to
 * body byte `endByte`. The caller asks for no more pairs than the body holds from there.
 */
export class RunBodyDecoder {
  private pos = 0;
  private len = 0;
  /** The body offset of buf[len]. */
  private filePos: number;
  private key: number;
  private left = 0;
  private doc = 0;

  constructor(
    private readonly read: BodyRead,
    private readonly buf: Uint8Array,
    from: GroupStart,
    private readonly endByte: number,
    private readonly where: string,
  ) {
    if (buf.length < 64) throw new RangeError('a run decoder needs a buffer of 64 bytes or more');
    if (buf.byteOffset !== 0) throw new RangeError('a run decoder owns its buffer from its start');
    this.filePos = from.byte;
    this.key = from.keyBefore;
  }

  /** The buffer's memory, for reuse once the decoder is done. */
  get buffer(): ArrayBuffer {
    return this.buf.buffer as ArrayBuffer;
  }

  /** Moves unread bytes to the front and reads more; false when the body's end was already read. */
  private refill(): boolean {
    if (this.filePos >= this.endByte) return false;
    const rest = this.len - this.pos;
    this.buf.copyWithin(0, this.pos, this.len);
    const want = Math.min(this.buf.length - rest, this.endByte - this.filePos);
    const got = this.read(this.buf.subarray(rest, rest + want), this.filePos);
    if (got < want) throw new Error(`${this.where}: run file is truncated`);
    this.pos = 0;
    this.len = rest + got;
    this.filePos += got;
    return true;
  }

  /** Pairs of the current group not decoded yet. */
  get groupLeft(): number {
    return this.left;
  }

  /**
   * The merge's group-at-a-time path (RunCursor.takeTerm): the next `k` documents of the current
   * group counted straight into postings, one for each distinct document, mapped through `map`
   * (a worker's document numbers) as it closes, without writing them out as pairs first.
   * `tally` holds the open posting before and after.
   */
  takeDocs(k: number, tally: DocTally, out: TallyColumns, map: Uint32Array | undefined): void {
    if (k > this.left) throw new RangeError(`${k} documents asked of a group with ${this.left} left`);
    const buf = this.buf;
    let pos = this.pos;
    let doc = tally.doc;
    let tf = tally.tf;
    let n = out.df;
    let docs = out.docIds;
    let tfs = out.tfs;
    while (k > 0) {
      if (pos + 5 > this.len && this.filePos < this.endByte) {
        this.pos = pos;
        this.refill();
        pos = this.pos;
      }
      const len = this.len;
      const safe = this.filePos >= this.endByte ? len : len - 4;
      // A refill leaves a whole varint unless the body has ended.
      if (pos >= safe) throw new Error(`${this.where}: run file is truncated`);
      while (k > 0 && pos < safe) {
        let b = buf[pos++]!;
        if (b === 0) {
          tf++;
        } else {
          let gap = b & 0x7f;
          for (let shift = 7; b & 0x80; shift += 7) gap += ((b = buf[pos++]!) & 0x7f) * 2 ** shift;
          if (n === docs.length) {
            out.df = n;
            out.reserve(n + 1);
            docs = out.docIds;
            tfs = out.tfs;
          }
          docs[n] = map ? map[doc]! : doc;
          tfs[n++] = tf;
          doc += gap;
          tf = 1;
        }
        k--;
        this.left--;
      }
      if (pos > len) throw new Error(`${this.where}: run file is truncated`);
    }
    this.pos = pos;
    this.doc = doc;
    out.df = n;
    tally.doc = doc;
    tally.tf = tf;
  }

  /** Decodes the next `max` pairs into `out` (key, document interleaved); throws if the body ends first. */
  decode(out: Uint32Array, max: number): void {
    const buf = this.buf;
    let n = 0;
    let pos = this.pos;
    let key = this.key;
    let left = this.left;
    let doc = this.doc;
    while (n < max) {
      // Room for a header (two varints) or a document, or the body's last bytes.
      if (pos + 10 > this.len && this.filePos < this.endByte) {
        this.pos = pos;
        this.refill();
        pos = this.pos;
      }
      const len = this.len;
      const last = this.filePos >= this.endByte;
      if (left === 0) {
        if (pos >= len) break;
        let b = buf[pos++]!;
        let v = b & 0x7f;
        for (let shift = 7; b & 0x80; shift += 7) v += ((b = buf[pos++]!) & 0x7f) * 2 ** shift;
        key += v;
        b = buf[pos++]!;
        v = b & 0x7f;
        for (let shift = 7; b & 0x80; shift += 7) v += ((b = buf[pos++]!) & 0x7f) * 2 ** shift;
        left = v;
        doc = 0;
        if (pos > len || left === 0 || key > 0xffffffff) throw new Error(`${this.where}: run file is damaged (a group header)`);
      }
      // Documents while 5 bytes (a whole varint) are surely loaded.
      const safe = last ? len : len - 4;
      let m = Math.min(left, max - n);
      while (m > 0 && pos < safe) {
        let b = buf[pos++]!;
        if (b < 0x80) doc += b;
        else {
          let v = b & 0x7f;
          for (let shift = 7; b & 0x80; shift += 7) v += ((b = buf[pos++]!) & 0x7f) * 2 ** shift;
          doc += v;
        }
        out[2 * n] = key;
        out[2 * n + 1] = doc;
        n++;
        m--;
        left--;
      }
      if (pos > len) throw new Error(`${this.where}: run file is truncated`);
      if (last && m > 0 && pos >= len) break;
    }
    this.pos = pos;
    this.key = key;
    this.left = left;
    this.doc = doc;
    if (n < max) throw new Error(`${this.where}: run file is truncated (${max - n} pairs missing)`);
  }
}

/** Growable postings columns (runs.ts' PostingsColumns). */
export interface TallyColumns {
  docIds: Uint32Array;
  tfs: Uint32Array;
  df: number;
  reserve(n: number): void;
}

/** A posting being counted: its document (the run's numbering) and occurrences so far. */
export interface DocTally {
  doc: number;
  tf: number;
}

/**
 * The first group whose key is >= `key`, given the run's samples and a way to read its body.
 * Between two samples lie fewer than `stride` pairs of groups, then the group that crosses the
 * next mark and ends where the next sample starts: so at most a stride's worth of documents is
 * read and skipped, never a whole large group.
 */
export function firstGroupAtOrAfter(read: BodyRead, where: string, count: number, bodyBytes: number, samples: Uint32Array, key: number): GroupStart {
  const n = samples.length / SAMPLE_WORDS;
  let lo = 0;
  let hi = n;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (samples[SAMPLE_WORDS * mid]! < key) lo = mid + 1;
    else hi = mid;
  }
  if (lo === 0) return { pair: 0, byte: 0, keyBefore: 0 };
  const s = SAMPLE_WORDS * (lo - 1);
  const endPair = lo < n ? samples[SAMPLE_WORDS * lo + 1]! : count;
  const endByte = lo < n ? sampleByte(samples, lo) : bodyBytes;
  let pair = samples[s + 1]!;
  const startByte = sampleByte(samples, lo - 1);
  const stride = sampleStrideOf(count);
  // Headers of up to a stride of groups and a stride of documents, 5 bytes each at most.
  const window = new Uint8Array(Math.min(endByte - startByte, 15 * stride + 20));
  if (read(window, startByte) < window.length) throw new Error(`${where}: run file is truncated`);
  let pos = 0;
  let groupKey = samples[s]!;
  let keyBefore = 0;
  const varint = (): number => {
    let b = window[pos++]!;
    let v = b & 0x7f;
    for (let shift = 7; b & 0x80; shift += 7) v += ((b = window[pos++]!) & 0x7f) * 2 ** shift;
    if (pos > window.length) throw new Error(`${where}: run file is damaged (a group past its samples)`);
    return v;
  };
  for (let first = true; ; first = false) {
    const at = pos;
    const delta = varint();
    if (!first) groupKey = keyBefore + delta;
    if (groupKey >= key) return { pair, byte: startByte + at, keyBefore };
    const size = varint();
    if (size === 0) throw new Error(`${where}: run file is damaged (an empty group)`);
    pair += size;
    keyBefore = groupKey;
    // The group that reaches the next sample ends where it starts.
    if (pair >= endPair) return { pair: endPair, byte: endByte, keyBefore };
    for (let k = 0; k < size; k++) varint();
  }
}

/** A sample's body byte offset. */
export function sampleByte(samples: Uint32Array, i: number): number {
  return samples[SAMPLE_WORDS * i + 2]! + samples[SAMPLE_WORDS * i + 3]! * 2 ** 32;
}
