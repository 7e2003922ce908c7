/**
 * Raw tokens as bytes: their UTF-8 one after another and where each ends. How a parse worker
 * sends the raw tokens of its new local terms (ParsedBatch.newTerms) and how the main thread
 * keeps them (BatchRemapper): the worker's scanner has each new token's bytes already, and a
 * string made of them (~0.2 us) and serialized for postMessage cost mail's parse worker ~30 ms
 * for its 127 K raw tokens; the main thread makes a string only of what it needs (the term).
 */

/** A batch's new raw tokens: token i is bytes[ends[i - 1] .. ends[i]) (from 0 for i = 0). */
export interface RawTokenBytes {
  bytes: Uint8Array;
  ends: Uint32Array;
}

export class RawTokenList {
  private buf = Buffer.allocUnsafe(1 << 12);
  private used = 0;
  private ends = new Uint32Array(256);
  /** Tokens in the list. */
  count = 0;

  /** The bytes of token i: [start(i), end(i)) of bytes(). */
  start(i: number): number {
    return i === 0 ? 0 : this.ends[i - 1]!;
  }

  end(i: number): number {
    return this.ends[i]!;
  }

  /** The list's bytes (a view, valid until the next push). */
  get bytes(): Buffer {
    return this.buf;
  }

  /** Token i as a string (its bytes read as UTF-8). */
  string(i: number): string {
    return this.buf.toString('utf8', this.start(i), this.ends[i]!);
  }

  /** Adds a token given as a string. */
  pushString(token: string): void {
    const most = 3 * token.length;
    this.room(most, 1);
    this.used += this.buf.write(token, this.used, most, 'utf8');
    this.ends[this.count++] = this.used;
  }

  /** Adds `lengths.length` tokens whose bytes lie one after another in `src` from `from`. */
  pushRun(src: Uint8Array, from: number, lengths: ArrayLike<number>, n = lengths.length): void {
    let total = 0;
    for (let k = 0; k < n; k++) total += lengths[k]!;
    this.room(total, n);
    this.buf.set(src.subarray(from, from + total), this.used);
    for (let k = 0; k < n; k++) {
      this.used += lengths[k]!;
      this.ends[this.count++] = this.used;
    }
  }

  /** Adds a batch's tokens (ParsedBatch.newTerms). */
  append(b: RawTokenBytes): void {
    const n = b.ends.length;
    this.room(b.bytes.length, n);
    this.buf.set(b.bytes, this.used);
    for (let k = 0; k < n; k++) this.ends[this.count++] = this.used + b.ends[k]!;
    this.used += b.bytes.length;
  }

  /** Empties the list, keeping its buffers. */
  clear(): void {
    this.used = 0;
    this.count = 0;
  }

  /** The tokens added since the last call, as a batch sends them (copies), and empties the list. */
  take(): RawTokenBytes {
    const taken = { bytes: new Uint8Array(this.buf.subarray(0, this.used)), ends: this.ends.slice(0, this.count) };
    this.used = 0;
    this.count = 0;
    return taken;
  }

  private room(bytes: number, tokens: number): void {
    if (this.used + bytes > this.buf.length) {
      const grown = Buffer.allocUnsafe(Math.max(2 * this.buf.length, this.used + bytes));
      grown.set(this.buf.subarray(0, this.used));
      this.buf = grown;
    }
    if (this.count + tokens > this.ends.length) {
      const grown = new Uint32Array(Math.max(2 * this.ends.length, this.count + tokens));
      grown.set(this.ends.subarray(0, this.count));
      this.ends = grown;
    }
  }
}
