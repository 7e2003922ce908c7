/**
 * The WebAssembly markup pass (indexer/scan/wasm/html-tokens.ts, built to html-tokens.wasm): a
 * page's bytes to the events html-scan.ts hands to the element stack. One instance a thread,
 * made on first use. GPUINDEX_HTML_SCAN=js turns it off (the JS scan then reads every page).
 */
import { wasmInstance } from '../../runtime/wasm-instance.js';

/** Event kinds; must equal EV_* in indexer/scan/wasm/html-tokens.ts. */
export const EV_TEXT = 1;
export const EV_TEXT_AMP = 2;
export const EV_RAW = 3;
export const EV_OPEN = 4;
export const EV_OPEN_TAG = 5;
export const EV_SELF_CLOSE = 6;
export const EV_CLOSE = 7;
export const EV_LAST_CHAR = 8;
export const EV_CDATA = 9;
export const EV_CUT_NAME = 10;
/** What scan(), resume() and answer() return; must equal DONE, FULL, BAIL and ASK there. */
export const DONE = 0;
export const FULL = 1;
export const BAIL = 2;
export const ASK = 3;

interface TokenExports {
  memory: { buffer: ArrayBuffer };
  input(length: number): number;
  eventsPtr(): number;
  eventCount(): number;
  scan(length: number): number;
  resume(): number;
  answer(foreign: number): number;
}

/** A thread's scanner: the page goes in with `load`, the events come out `scan`/`resume` at a time. */
export class HtmlTokens {
  private readonly x: TokenExports;
  private bytes = new Uint8Array(0);
  /** The events of the last scan/resume: kind, a, b, c. */
  events = new Int32Array(0);

  constructor() {
    this.x = wasmInstance<TokenExports>('indexer/scan/wasm/html-tokens.wasm');
  }

  /** Scans `page`: DONE, FULL (take `events`, then resume()), ASK (take them, then answer()) or BAIL. */
  scan(page: Uint8Array): number {
    const at = this.x.input(page.length);
    this.views();
    this.bytes.set(page, at);
    return this.taken(this.x.scan(page.length));
  }

  resume(): number {
    return this.taken(this.x.resume());
  }

  /** After ASK: whether the element stack is in foreign content now. */
  answer(foreign: boolean): number {
    return this.taken(this.x.answer(foreign ? 1 : 0));
  }

  private taken(r: number): number {
    this.events = new Int32Array(this.x.memory.buffer, this.x.eventsPtr(), 4 * this.x.eventCount());
    return r;
  }

  /** Views of the memory, again after it grew. */
  private views(): void {
    if (this.bytes.buffer !== this.x.memory.buffer) this.bytes = new Uint8Array(this.x.memory.buffer);
  }
}

let tokens: HtmlTokens | null | undefined;

/** This thread's scanner, or undefined where GPUINDEX_HTML_SCAN=js. */
export function htmlTokens(): HtmlTokens | undefined {
  if (tokens === undefined) tokens = process.env.GPUINDEX_HTML_SCAN === 'js' ? null : new HtmlTokens();
  return tokens ?? undefined;
}
