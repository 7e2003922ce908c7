/**
 * One WARC record to a document, or to what it is when it is not one. `response` records carry
 * an HTTP message: its status line and headers are parsed, chunked transfer coding and a
 * Content-Encoding of gzip, deflate or br undone; `resource` and `conversion` records (the
 * latter Common Crawl's WET text) carry the payload itself, typed by the record's Content-Type.
 * A payload of HTML, XHTML or plain text is a document; anything else (request, metadata,
 * warcinfo and revisit records, images, scripts, redirects) is counted by kind, not reported.
 */
import { brotliDecompressSync, gunzipSync, inflateRawSync, inflateSync } from 'node:zlib';
import { decodeFile } from './decode.js';
import { readHtmlPage, readHtmlPageInverted, type PageRead, type Utf8TextInverter } from './html.js';
import type { SourceDocument } from './types.js';
import type { WarcRecord } from './warc-records.js';

/** A record that is a document, one that is not (what it is, for the counts), or a damaged one. */
export type RecordOutcome = { doc: SourceDocument } | { ignored: string } | { damaged: string };

const INDEXED_TYPES = new Set(['response', 'resource', 'conversion']);
const HTML_TYPES = new Set(['text/html', 'application/xhtml+xml']);

/** 'text/html' of 'Text/HTML; charset=utf-8'. */
export const mediaTypeOf = (contentType: string | undefined): string => (contentType ?? '').split(';')[0]!.trim().toLowerCase();

/**
 * `path` is the WARC file's, for the document's path. With `invert`, a UTF-8 HTML page comes
 * inverted from its text's bytes (SourceDocument.termIds, a view until invert's next call).
 */
export function recordOutcome(rec: WarcRecord, path: string, invert?: Utf8TextInverter): RecordOutcome {
  const type = (rec.headers.get('warc-type') ?? '').toLowerCase();
  if (type === '') return { damaged: 'no WARC-Type' };
  if (!INDEXED_TYPES.has(type)) return { ignored: `${type} records` };
  const uri = (rec.headers.get('warc-target-uri') ?? '').replace(/^<(.*)>$/, '$1');
  if (uri === '') return { damaged: `${type} record without WARC-Target-URI` };
  let payload = rec.block;
  let contentType = rec.headers.get('content-type');
  if (type === 'response') {
    const isHttp = payload.subarray(0, 5).toString('latin1') === 'HTTP/';
    const declaredHttp = mediaTypeOf(contentType) === 'application/http';
    if (!isHttp) {
      if (payload.length === 0) return { ignored: 'empty records' };
      // A response that is not HTTP (dns:, whois:, ftp: crawls) is what its Content-Type says.
      if (declaredHttp) return { damaged: 'response record of type application/http without an HTTP status line' };
    } else {
      const http = parseHttp(payload);
      if ('damaged' in http) return http;
      if (http.status < 200 || http.status > 299) return { ignored: `HTTP ${Math.floor(http.status / 100)}xx responses` };
      contentType = http.headers.get('content-type');
      payload = http.body;
      const transfer = (http.headers.get('transfer-encoding') ?? '').toLowerCase();
      if (transfer.includes('chunked')) {
        const body = dechunk(payload);
        if (body === undefined) return { damaged: 'bad chunked transfer coding' };
        payload = body;
      }
      const coding = (http.headers.get('content-encoding') ?? '').trim().toLowerCase();
      if (coding !== '' && coding !== 'identity') {
        const decoded = decodeContent(payload, coding);
        if (typeof decoded !== 'string') payload = decoded;
        else if (decoded.startsWith('unsupported')) return { ignored: `Content-Encoding ${coding} payloads` };
        // Crawlers have stored bodies already decoded under the original header (Common Crawl
        // until 2018): a body that does not decode but reads as text is taken as it is.
        else if (!looksDecoded(payload)) return { damaged: decoded };
      }
    }
  }
  if (payload.length === 0) return { ignored: 'empty payloads' };
  let media = mediaTypeOf(contentType);
  if (media === '' || media === 'application/octet-stream') media = sniffHtml(payload) ? 'text/html' : media;
  const html = HTML_TYPES.has(media);
  if (!html && media !== 'text/plain') return { ignored: `${media || 'untyped'} payloads` };
  const read: PageRead | { termIds: Uint32Array } = !html ? decodeFile(payload, false, contentType) : invert ? readHtmlPageInverted(payload, invert, contentType) : readHtmlPage(payload, contentType);
  if ('termIds' in read) return { doc: { externalId: uri, path, title: '', text: '', bytes: rec.block.length, warc: warcFields(rec), termIds: read.termIds } };
  if ('reason' in read) return { ignored: `${read.reason === 'binary file' ? 'binary' : 'empty'} ${media} payloads` };
  const { title = '', text } = read;
  const doc: SourceDocument = { externalId: uri, path, title, text, bytes: rec.block.length, warc: warcFields(rec) };
  if (read.warning) doc.warning = read.warning;
  return { doc };
}

function warcFields(rec: WarcRecord): { date?: string; recordId?: string } {
  const date = rec.headers.get('warc-date');
  const recordId = rec.headers.get('warc-record-id');
  return { ...(date ? { date } : {}), ...(recordId ? { recordId } : {}) };
}

/** Whether untyped bytes open like an HTML page (the start of a browser's sniffing). */
function sniffHtml(b: Buffer): boolean {
  const head = b.subarray(0, 512).toString('latin1').trimStart().toLowerCase();
  return /^(?:\ufeff)?<(?:!doctype html|html|head|body|title|!--)/.test(head);
}

interface HttpMessage {
  status: number;
  headers: Map<string, string>;
  body: Buffer;
}

/** An HTTP/1.x response: status line, header lines to a blank line (CRLF or LF), body. */
export function parseHttp(block: Buffer): HttpMessage | { damaged: string } {
  let end = block.indexOf('\r\n\r\n');
  let sep = 4;
  const lf = block.indexOf('\n\n');
  if (lf >= 0 && (end < 0 || lf < end)) {
    end = lf;
    sep = 2;
  }
  if (end < 0) {
    // Headers only (a HEAD response, or a body-less 304).
    end = block.length;
    sep = 0;
  }
  const head = block.toString('latin1', 0, end).split(/\r?\n/);
  const status = /^HTTP\/\d(?:\.\d)?\s+(\d{3})\b/.exec(head[0]!);
  if (!status) return { damaged: 'response record with a bad HTTP status line' };
  const headers = new Map<string, string>();
  for (let i = 1; i < head.length; i++) {
    const colon = head[i]!.indexOf(':');
    if (colon <= 0) continue;
    const name = head[i]!.slice(0, colon).trim().toLowerCase();
    if (!headers.has(name)) headers.set(name, head[i]!.slice(colon + 1).trim());
  }
  return { status: Number(status[1]), headers, body: block.subarray(Math.min(block.length, end + sep)) };
}

/** The body of chunked transfer coding; undefined when it is malformed (a cut last chunk is kept: crawlers store what came). */
export function dechunk(b: Buffer): Buffer | undefined {
  const parts: Buffer[] = [];
  let i = 0;
  for (;;) {
    const eol = b.indexOf('\n', i);
    if (eol < 0) return parts.length > 0 || i >= b.length ? Buffer.concat(parts) : undefined;
    const size = /^([0-9a-fA-F]+)/.exec(b.toString('latin1', i, eol).trim());
    if (!size) return undefined;
    const n = parseInt(size[1]!, 16);
    if (n === 0) return Buffer.concat(parts);
    const from = eol + 1;
    parts.push(b.subarray(from, Math.min(b.length, from + n)));
    if (from + n >= b.length) return Buffer.concat(parts);
    i = from + n;
    if (b[i] === 0x0d) i++;
    if (b[i] === 0x0a) i++;
  }
}

/** Whether a body that failed to decode is plain text already: no gzip magic, no NUL byte in its first 8 KiB. */
function looksDecoded(b: Buffer): boolean {
  if (b.length >= 2 && b[0] === 0x1f && b[1] === 0x8b) return false;
  return !b.subarray(0, 8192).includes(0);
}

/** A Content-Encoding undone, or why not ('unsupported ...' for codings not handled). */
export function decodeContent(b: Buffer, coding: string): Buffer | string {
  try {
    if (coding === 'gzip' || coding === 'x-gzip') return gunzipSync(b);
    if (coding === 'br') return brotliDecompressSync(b);
    if (coding === 'deflate') {
      // Servers send zlib-wrapped or raw deflate under this name.
      try {
        return inflateSync(b);
      } catch {
        return inflateRawSync(b);
      }
    }
  } catch (err) {
    return `Content-Encoding ${coding} that does not decode (${(err as Error).message})`;
  }
  return `unsupported Content-Encoding ${coding}`;
}
