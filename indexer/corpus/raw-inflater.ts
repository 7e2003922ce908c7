/**
 * One raw-deflate engine of node:zlib, reset and reused for every gzip member of a `.warc.gz`
 * (Common Crawl's layout: a member a record, three records a page). `inflateRawSync` makes an
 * engine (a Transform stream, zlib's state and window) and its output chunks for every call and
 * frees them after it: a cost per member, not per byte, that grows with the cores allocating at
 * once (warc.ts). This drives the engine's handle directly, as node:zlib's own synchronous path
 * does, into one output buffer kept across members, whose bytes each member's caller reads in
 * place (keep). Where the handle is not what this expects (another Node), every call falls back
 * to `inflateRawSync`, with the same results.
 */
import { constants, createInflateRaw, inflateRawSync, type InflateRaw } from 'node:zlib';

/** What node:zlib's synchronous path calls on an engine's handle (lib/zlib.js processChunkSync). */
interface ZlibHandle {
  writeSync(flush: number, input: Uint8Array, inOff: number, inLen: number, out: Uint8Array, outOff: number, outLen: number): void;
  reset(): void;
  close(): void;
  onerror: (message: string, errno: number, code?: string) => void;
}

interface OpenEngine {
  engine: InflateRaw;
  handle: ZlibHandle;
  /** [avail_out, avail_in] after each writeSync. */
  state: Uint32Array;
}

/** An inflated member: its bytes (a view valid until the next inflate, unless kept) and the compressed bytes it took. */
export interface RawInflated {
  buffer: Buffer;
  consumed: number;
}

const FIRST_OUTPUT_BYTES = 256 * 1024;
/** An output buffer grown past this for one large member is not kept for the next (a 100 MB record's would be, a thread's life long). */
const MAX_KEPT_OUTPUT_BYTES = 4 << 20;

/** An error shaped as inflateRawSync throws it: `code` is what callers decide on. */
function zlibError(message: string, code: string, errno?: number): Error {
  const err = new Error(message) as NodeJS.ErrnoException;
  err.code = code;
  if (errno !== undefined) err.errno = errno;
  return err;
}

export class RawInflater {
  private open?: OpenEngine;
  /** Whether the handle is usable as expected; false: inflateRawSync for every member. */
  private direct = true;
  private out: Buffer = Buffer.allocUnsafe(FIRST_OUTPUT_BYTES);
  private failure?: Error;

  /**
   * The raw deflate stream at the start of `input` (bytes after its end are left), as
   * `inflateRawSync(input, { info: true, maxOutputLength })` gives it: throws with code
   * Z_BUF_ERROR when `input` ends first, ERR_BUFFER_TOO_LARGE past `maxOutput`, or zlib's own
   * code when the data is corrupt.
   */
  inflate(input: Buffer, maxOutput: number): RawInflated {
    if (this.out.length > MAX_KEPT_OUTPUT_BYTES) this.out = Buffer.allocUnsafe(FIRST_OUTPUT_BYTES);
    const open = this.direct ? this.engine() : undefined;
    if (!open) return this.viaSyncCall(input, maxOutput);
    const { handle, state } = open;
    let inOff = 0;
    let inLeft = input.length;
    let outAt = 0;
    try {
      for (;;) {
        const room = this.out.length - outAt;
        handle.writeSync(constants.Z_FINISH, input, inOff, inLeft, this.out, outAt, room);
        if (this.failure) throw this.failure;
        const outLeft = state[0]!;
        const inAfter = state[1]!;
        outAt += room - outLeft;
        inOff += inLeft - inAfter;
        inLeft = inAfter;
        if (outAt > maxOutput) throw zlibError(`Cannot create a Buffer larger than ${maxOutput} bytes`, 'ERR_BUFFER_TOO_LARGE');
        // Output space left over: the stream ended (an input that ends first is an error above).
        if (outLeft > 0) break;
        this.out = growBuffer(this.out, outAt, Math.min(2 * this.out.length, maxOutput + 1));
      }
      handle.reset();
    } catch (err) {
      this.discard();
      throw err;
    }
    return { buffer: this.out.subarray(0, outAt), consumed: inOff };
  }

  /**
   * The caller holds the last member's bytes past the next inflate (a record that goes on in the
   * next member): the next one goes into a new output buffer. Copying every member out instead
   * cost a WARC worker ~10 % of its time (profiled on the 2-core machine).
   */
  keep(): void {
    if (this.direct) this.out = Buffer.allocUnsafe(FIRST_OUTPUT_BYTES);
  }

  /** Frees the engine (a reader's end). */
  close(): void {
    this.discard();
  }

  private engine(): OpenEngine | undefined {
    if (this.open) return this.open;
    const engine = createInflateRaw();
    const inner = engine as unknown as { _handle?: Partial<ZlibHandle>; _writeState?: unknown };
    const handle = inner._handle;
    const state = inner._writeState;
    if (!handle || typeof handle.writeSync !== 'function' || typeof handle.reset !== 'function' || !(state instanceof Uint32Array) || state.length < 2) {
      this.direct = false;
      engine.close();
      return undefined;
    }
    // The stream's own handler would destroy the engine; the error is thrown from inflate instead.
    handle.onerror = (message: string, errno: number, code?: string) => {
      this.failure = zlibError(message, code ?? 'Z_DATA_ERROR', errno);
    };
    this.open = { engine, handle: handle as ZlibHandle, state };
    return this.open;
  }

  /** After a fault the engine is closed; the next member gets a new one. */
  private discard(): void {
    const open = this.open;
    this.open = undefined;
    this.failure = undefined;
    if (!open) return;
    try {
      open.handle.close();
    } catch {
      // already closed
    }
  }

  private viaSyncCall(input: Buffer, maxOutput: number): RawInflated {
    const r = inflateRawSync(input, { info: true, chunkSize: 16 * 1024, maxOutputLength: maxOutput }) as unknown as { buffer: Buffer; engine: { bytesWritten: number } };
    return { buffer: r.buffer, consumed: r.engine.bytesWritten };
  }
}

/** `b`'s first `used` bytes in a buffer of `size`. */
function growBuffer(b: Buffer, used: number, size: number): Buffer {
  const grown = Buffer.allocUnsafe(Math.max(size, used + 1));
  b.copy(grown, 0, 0, used);
  return grown;
}
