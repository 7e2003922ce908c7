/**
 * Reads one crawl file into documents. Never throws for bad input: unreadable, empty, binary,
 * truncated or malformed data becomes a skip item naming the file (and line) and the reason,
 * and every good document before (and, for JSONL, after) the damage is still yielded.
 */
import { createReadStream } from 'node:fs';
import { isUtf8 } from 'node:buffer';
import { join } from 'node:path';
import { pipeline, type Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { createRequire } from 'node:module';
import { documentFromJson } from './fields.js';
import { formatOf } from './formats.js';
import { htmlToText } from './html.js';
import type { CorpusItem, CorpusOptions } from './types.js';

const require = createRequire(import.meta.url);
// stream-json 3 ships CommonJS streamers; withParserAsStream gives parser + streamer as one Duplex.
const { streamArray } = require('stream-json/streamers/stream-array.js') as { streamArray: { withParserAsStream(): NodeJS.ReadWriteStream } };
const { streamValues } = require('stream-json/streamers/stream-values.js') as { streamValues: { withParserAsStream(): NodeJS.ReadWriteStream } };

/** Longest JSONL line and largest single-document file we hold in memory. */
export const MAX_LINE_BYTES = 256 * 2 ** 20;
export const MAX_FILE_BYTES = 512 * 2 ** 20;
const SNIFF_BYTES = 8192;

const errText = (err: unknown): string => {
  const e = err as NodeJS.ErrnoException;
  return e?.code && !String(e.message).includes(e.code) ? `${e.code}: ${e.message}` : String(e?.message ?? err);
};

function openStream(full: string, gzip: boolean): Readable {
  const raw = createReadStream(full, { highWaterMark: 1 << 20 });
  if (!gzip) return raw;
  return pipeline(raw, createGunzip({ chunkSize: 1 << 20 }), () => {}) as unknown as Readable;
}

const hasNul = (b: Buffer): boolean => b.subarray(0, SNIFF_BYTES).includes(0);

async function* readJsonl(full: string, path: string, gzip: boolean, options: CorpusOptions): AsyncGenerator<CorpusItem> {
  let rest: Buffer | undefined;
  let lineNo = 0;
  let total = 0;
  let discarding = false; // inside an over-long line
  const lineItem = (buf: Buffer): CorpusItem | undefined => {
    lineNo++;
    let end = buf.length;
    if (end > 0 && buf[end - 1] === 0x0d) end--;
    const line = end === buf.length ? buf : buf.subarray(0, end);
    let blank = true;
    for (let i = 0; i < line.length; i++) {
      const c = line[i]!;
      if (c !== 0x20 && c !== 0x09) {
        blank = false;
        break;
      }
    }
    if (blank) return undefined;
    if (!isUtf8(line)) return { kind: 'skip', skip: { path, line: lineNo, reason: 'invalid UTF-8' } };
    let value: unknown;
    try {
      value = JSON.parse(line.toString('utf8'));
    } catch (err) {
      return { kind: 'skip', skip: { path, line: lineNo, reason: `invalid JSON: ${(err as Error).message}` } };
    }
    const r = documentFromJson(value, `${path}:${lineNo}`, options);
    if ('reason' in r) return { kind: 'skip', skip: { path, line: lineNo, reason: r.reason } };
    return { kind: 'doc', doc: { ...r.doc, path, line: lineNo, bytes: line.length } };
  };
  try {
    for await (const chunk of openStream(full, gzip) as AsyncIterable<Buffer>) {
      if (total === 0 && hasNul(chunk)) {
        yield { kind: 'skip', skip: { path, reason: 'binary file' } };
        return;
      }
      total += chunk.length;
      let start = 0;
      for (;;) {
        const nl = chunk.indexOf(0x0a, start);
        if (nl < 0) break;
        if (discarding) {
          discarding = false;
        } else {
          const piece = chunk.subarray(start, nl);
          const item = lineItem(rest ? Buffer.concat([rest, piece]) : piece);
          if (item) yield item;
        }
        rest = undefined;
        start = nl + 1;
      }
      if (start < chunk.length && !discarding) {
        const tail = chunk.subarray(start);
        rest = rest ? Buffer.concat([rest, tail]) : Buffer.from(tail);
        if (rest.length > MAX_LINE_BYTES) {
          lineNo++;
          yield { kind: 'skip', skip: { path, line: lineNo, reason: `line longer than ${MAX_LINE_BYTES / 2 ** 20} MiB` } };
          rest = undefined;
          discarding = true;
        }
      }
    }
  } catch (err) {
    yield { kind: 'skip', skip: { path, line: lineNo + 1, reason: `${gzip ? 'corrupt or truncated gzip' : 'read error'} (${errText(err)}); the rest of the file is skipped` } };
    return;
  }
  if (rest && !discarding) {
    const item = lineItem(rest);
    if (item) yield item;
  }
  if (total === 0) yield { kind: 'skip', skip: { path, reason: 'empty file' } };
}

async function readWhole(full: string, gzip: boolean): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of openStream(full, gzip) as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_FILE_BYTES) throw Object.assign(new Error(`file larger than ${MAX_FILE_BYTES / 2 ** 20} MiB`), { code: 'EFBIG' });
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size);
}

async function* readSingle(full: string, path: string, gzip: boolean, kind: 'html' | 'text'): AsyncGenerator<CorpusItem> {
  let buf: Buffer;
  try {
    buf = await readWhole(full, gzip);
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    const reason = e.code === 'EFBIG' ? e.message : gzip && !e.syscall ? `corrupt or truncated gzip (${errText(err)})` : `cannot read (${errText(err)})`;
    yield { kind: 'skip', skip: { path, reason } };
    return;
  }
  if (buf.length === 0) return yield { kind: 'skip', skip: { path, reason: 'empty file' } };
  if (hasNul(buf)) return yield { kind: 'skip', skip: { path, reason: 'binary file' } };
  if (!isUtf8(buf)) return yield { kind: 'skip', skip: { path, reason: 'invalid UTF-8' } };
  const s = buf.toString('utf8');
  if (kind === 'html') {
    const { title, text } = htmlToText(s);
    yield { kind: 'doc', doc: { externalId: path, path, title, text, bytes: buf.length } };
  } else {
    yield { kind: 'doc', doc: { externalId: path, path, title: '', text: s, bytes: buf.length } };
  }
}

async function* readJson(full: string, path: string, gzip: boolean, options: CorpusOptions): AsyncGenerator<CorpusItem> {
  // Sniff the first significant byte: an array streams element by element, anything else is one document.
  let first: number | undefined;
  let sniffed = 0;
  try {
    for await (const chunk of openStream(full, gzip) as AsyncIterable<Buffer>) {
      if (sniffed === 0 && hasNul(chunk)) return yield { kind: 'skip', skip: { path, reason: 'binary file' } };
      sniffed += chunk.length;
      for (let i = 0; i < chunk.length; i++) {
        const c = chunk[i]!;
        if (c === 0xef && i === 0) continue; // BOM
        if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09 && c !== 0xbb && c !== 0xbf) {
          first = c;
          break;
        }
      }
      if (first !== undefined || sniffed > SNIFF_BYTES) break;
    }
  } catch (err) {
    return yield { kind: 'skip', skip: { path, reason: `cannot read (${errText(err)})` } };
  }
  if (first === undefined) return yield { kind: 'skip', skip: { path, reason: 'empty file' } };
  const isArray = first === 0x5b;
  const streamer = isArray ? streamArray.withParserAsStream() : streamValues.withParserAsStream();
  const source = openStream(full, gzip);
  const chain = pipeline(source, streamer, () => {}) as unknown as AsyncIterable<{ key: number; value: unknown }>;
  let next = 0;
  try {
    for await (const { key, value } of chain) {
      next = key + 1;
      const fallback = isArray ? `${path}#${key}` : path;
      const r = documentFromJson(value, fallback, options);
      const line = isArray ? key : undefined;
      if ('reason' in r) yield { kind: 'skip', skip: { path, line, reason: r.reason } };
      else yield { kind: 'doc', doc: { ...r.doc, path, line, bytes: Buffer.byteLength(r.doc.title) + Buffer.byteLength(r.doc.text) } };
    }
  } catch (err) {
    const where = isArray ? `element ${next}` : 'the document';
    yield { kind: 'skip', skip: { path, line: isArray ? next : undefined, reason: `invalid JSON at ${where} (${errText(err)}); the rest of the file is skipped` } };
  }
}

/** Reads the file `relPath` (relative to `base`, '/'-separated). */
export async function* readCorpusFile(base: string, relPath: string, options: CorpusOptions = {}): AsyncGenerator<CorpusItem> {
  const fmt = formatOf(relPath);
  if (!fmt) return yield { kind: 'skip', skip: { path: relPath, reason: 'unsupported file type' } };
  const full = join(base, relPath);
  try {
    switch (fmt.format) {
      case 'jsonl':
        yield* readJsonl(full, relPath, fmt.gzip, options);
        break;
      case 'json':
        yield* readJson(full, relPath, fmt.gzip, options);
        break;
      default:
        yield* readSingle(full, relPath, fmt.gzip, fmt.format);
    }
  } catch (err) {
    // Opening failed (deleted or made unreadable during the walk).
    yield { kind: 'skip', skip: { path: relPath, reason: `cannot read (${errText(err)})` } };
  }
}
