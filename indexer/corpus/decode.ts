/**
 * Bytes to text for the corpus readers. Damaged text (bytes that are not valid UTF-8) is
 * decoded with U+FFFD for the bad bytes, those removed, and a warning says how many; the
 * readers then skip such a document with that reason (read-file.ts, `doc`). Files with a
 * NUL byte in their first 8 KiB are binary and skipped. The encoding is decided as a browser
 * decides it (charset.ts).
 */
import { isUtf8 } from 'node:buffer';
import { decideEncoding, decodeIn } from './charset.js';

export const SNIFF_BYTES = 8192;

export const hasNulByte = (buf: Uint8Array): boolean => buf.subarray(0, SNIFF_BYTES).includes(0);

const REPLACEMENT = /\uFFFD/g;

/** Removes U+FFFD; returns the text and how many were removed. */
export function removeReplacements(s: string): { text: string; removed: number } {
  if (!s.includes('\uFFFD')) return { text: s, removed: 0 };
  let removed = 0;
  const text = s.replace(REPLACEMENT, () => {
    removed++;
    return '';
  });
  return { text, removed };
}

export const invalidUtf8Warning = (removed: number): string => undecodable('invalid UTF-8', removed);

/** The reason for a document skipped for `n` byte sequences its encoding cannot decode (a skip: the document is not indexed). */
const undecodable = (what: string, n: number): string => `${what} (${n} byte sequence${n === 1 ? ' that does' : 's that do'} not decode)`;

export type Decoded = { text: string; warning?: string } | { reason: string };

/**
 * Decodes a whole document by the browser's order (charset.ts): a BOM, then the charset of
 * `httpContentType` (a WARC response's header), then for HTML a <meta> declaration in the
 * first 1,024 bytes, then UTF-8. Bytes the encoding cannot decode become U+FFFD, which are
 * removed and counted in the warning. A NUL byte in the first 8 KiB of a document that is not
 * UTF-16 makes it binary.
 */
export function decodeFile(buf: Buffer, html = false, httpContentType?: string): Decoded {
  const d = decodeOrKeepUtf8(buf, html, httpContentType);
  return 'utf8' in d ? { text: d.utf8.toString('utf8') } : d;
}

/**
 * decodeFile for an HTML page, which html-scan.ts can read as bytes where they are valid UTF-8
 * in a page decided UTF-8: then those bytes (after the BOM), undecoded (`utf8`).
 */
export function decodeHtmlPage(buf: Buffer, httpContentType?: string): Decoded | { utf8: Buffer } {
  return decodeOrKeepUtf8(buf, true, httpContentType);
}

/** decodeFile of a text file, where valid UTF-8 comes back as its bytes (after the BOM), undecoded (`utf8`). */
export function decodeTextFile(buf: Buffer): Decoded | { utf8: Buffer } {
  return decodeOrKeepUtf8(buf, false, undefined);
}

/** decodeFile, but valid UTF-8 is given back as its bytes (after the BOM), undecoded. */
function decodeOrKeepUtf8(buf: Buffer, html: boolean, httpContentType: string | undefined): Decoded | { utf8: Buffer } {
  if (buf.length === 0) return { reason: 'empty file' };
  const enc = decideEncoding(buf, httpContentType, html);
  const body = enc.bom ? buf.subarray(enc.bom) : buf;
  const utf16 = enc.name === 'utf-16le' || enc.name === 'utf-16be';
  if (!utf16 && hasNulByte(body)) return { reason: 'binary file' };
  if (enc.name === 'utf-8') {
    if (isUtf8(body)) return { utf8: body };
    return repaired(body.toString('utf8'), 'invalid UTF-8');
  }
  const text = decodeIn(body, enc.name);
  return repaired(text, utf16 ? 'invalid UTF-16' : `invalid ${enc.name}`);
}

function repaired(decoded: string, what: string): { text: string; warning?: string } {
  const { text, removed } = removeReplacements(decoded);
  if (removed === 0) return { text };
  return { text, warning: undecodable(what, removed) };
}
