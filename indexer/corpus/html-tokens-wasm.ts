/**
 * The WebAssembly text extraction (indexer/scan/wasm/html-tokens.ts, built to html-tokens.wasm):
 * a UTF-8 page's bytes to its text and title bytes, the markup pass and the element stack in one,
 * told the element rules of html-elements.ts when made. One instance a thread, made on first use.
 * GPUINDEX_HTML_SCAN=js turns it off (the JS scan and Extraction then read every page).
 */
import { wasmInstance } from '../../runtime/wasm-instance.js';
import { decodeEntity, entityText } from './html-entities.js';
import { RULE_NAMES, svgSpelling, tagRules, type Tag } from './html-elements.js';

/** What extract() returns; must equal DONE and FAIL there. */
const DONE = 0;

/** Flags of a tag's rules; must equal those of indexer/scan/wasm/html-names.ts. */
const HIDDEN = 1;
const BLOCK = 2;
const VOID = 4;
const TITLE = 8;
const FORM = 16;
const P = 32;
const BR = 64;
const IMAGE = 128;
/** Numbers of SVG's spellings: from here (ADJUSTED_BASE there). */
const ADJUSTED_BASE = 2048;

interface TextExports {
  memory: { buffer: ArrayBuffer };
  input(length: number): number;
  extract(length: number): number;
  textPtr(): number;
  textLength(): number;
  titleBytesPtr(): number;
  titleBytesLength(): number;
  numberOf(length: number): number;
  defineTag(number: number, flags: number, context: number, svgAdjusted: number, closable: number, closes: number): void;
  defineImage(img: number): void;
  entityBuffer(): number;
  setEntityLength(length: number): void;
}

/** A thread's extraction: extract() a page at a time. */
export class HtmlTokens {
  private readonly x: TextExports;
  private bytes = Buffer.alloc(0);
  private inPtr = 0;

  constructor() {
    this.x = wasmInstance<TextExports>('indexer/scan/wasm/html-tokens.wasm', { entity: (amp, limit) => this.entity(amp, limit) });
    this.defineRules();
  }

  /** The page's text and title as UTF-8 bytes (views valid until the next page), or undefined where it must go the JS way. */
  extract(page: Uint8Array): { title: Uint8Array; text: Uint8Array } | undefined {
    this.inPtr = this.x.input(page.length);
    this.views();
    this.bytes.set(page, this.inPtr);
    if (this.x.extract(page.length) !== DONE) return undefined;
    const { buffer } = this.x.memory;
    return {
      title: new Uint8Array(buffer, this.x.titleBytesPtr(), this.x.titleBytesLength()),
      text: new Uint8Array(buffer, this.x.textPtr(), this.x.textLength()),
    };
  }

  /** An entity the WebAssembly side leaves to the decoder: the characters it takes, its UTF-8 bytes in the entity buffer. */
  private entity(amp: number, limit: number): number {
    const taken = decodeEntity(this.bytes.toString('latin1', this.inPtr + amp, this.inPtr + limit), 0);
    if (taken > 0) this.x.setEntityLength(this.bytes.write(entityText(), this.x.entityBuffer(), 'utf8'));
    return taken;
  }

  /** Views of the memory, again after it grew. */
  private views(): void {
    const { buffer } = this.x.memory;
    if (this.bytes.buffer !== buffer) this.bytes = Buffer.from(buffer);
  }

  /** The element rules of html-elements.ts, numbered by the WebAssembly side's name table. */
  private defineRules(): void {
    const numbers = new Map<string, number>();
    for (const name of RULE_NAMES) {
      const at = this.x.input(name.length);
      this.views();
      this.bytes.write(name, at, 'latin1');
      numbers.set(name, this.x.numberOf(name.length));
    }
    const spellings = [...new Set(RULE_NAMES.map(svgSpelling).filter((s) => s !== undefined))];
    spellings.forEach((s, i) => numbers.set(s, ADJUSTED_BASE + i));
    // The names some start tag closes, a bit each.
    const closable = [...new Set(RULE_NAMES.flatMap((name) => [...(tagRules(name).closes ?? [])]))];
    if (closable.length > 32) throw new Error('html-tokens.wasm: more than 32 names closed by start tags');
    const bit = (name: string): number => (closable.includes(name) ? 2 ** closable.indexOf(name) : 0);
    for (const [name, number] of numbers) {
      const tag: Tag = tagRules(name);
      const flags =
        (tag.hidden ? HIDDEN : 0) | (tag.block ? BLOCK : 0) | (tag.isVoid ? VOID : 0) | (name === 'title' ? TITLE : 0) |
        (name === 'form' ? FORM : 0) | (name === 'p' ? P : 0) | (name === 'br' ? BR : 0) | (name === 'image' ? IMAGE : 0);
      let closes = 0;
      for (const closed of tag.closes ?? []) closes += bit(closed);
      const svg = svgSpelling(name);
      this.x.defineTag(number, flags, tag.context, svg === undefined || number >= ADJUSTED_BASE ? -1 : numbers.get(svg)!, bit(name) >>> 0, closes >>> 0);
    }
    this.x.defineImage(numbers.get('img')!);
  }
}

let tokens: HtmlTokens | null | undefined;

/** This thread's extraction, or undefined where GPUINDEX_HTML_SCAN=js. */
export function htmlTokens(): HtmlTokens | undefined {
  if (tokens === undefined) tokens = process.env.GPUINDEX_HTML_SCAN === 'js' ? null : new HtmlTokens();
  return tokens ?? undefined;
}
