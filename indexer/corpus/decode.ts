/**
 * Bytes to text for the corpus readers. Damaged text (bytes that are not valid UTF-8) is
 * decoded with U+FFFD for the bad bytes, those removed, and a warning says how many; the
 * readers then skip such a document with that reason (read-file.ts, `doc`). Files with a
 * NUL byte in their first 8 KiB are binary and skipped. A UTF-8 BOM is dropped; a UTF-16 BOM
 * selects UTF-16.
 */
import { isUtf8 } from 'node:buffer';

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

export const invalidUtf8Warning = (removed: number): string =>
  `invalid UTF-8 (${removed} replacement character${removed === 1 ? '' : 's'} removed)`;

export type Decoded = { text: string; warning?: string } | { reason: string };

/**
 * Decodes a whole file. `charset` is a label declared by the file itself (an HTML meta tag);
 * it is used when the TextDecoder knows it and it is not UTF-8.
 */
export function decodeFile(buf: Buffer, charset?: string): Decoded {
  if (buf.length === 0) return { reason: 'empty file' };
  if (buf.length >= 2 && ((buf[0] === 0xff && buf[1] === 0xfe) || (buf[0] === 0xfe && buf[1] === 0xff))) {
    const text = new TextDecoder(buf[0] === 0xff ? 'utf-16le' : 'utf-16be').decode(buf); // drops the BOM
    return repaired(text, 'invalid UTF-16');
  }
  let start = 0;
  if (buf.length >= 3 && buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf) start = 3;
  const body = start ? buf.subarray(start) : buf;
  if (hasNulByte(body)) return { reason: 'binary file' };
  if (charset && !/^utf-?8$/i.test(charset)) {
    let decoder: TextDecoder | undefined;
    try {
      decoder = new TextDecoder(charset);
    } catch {
      decoder = undefined; // unknown label: fall back to UTF-8
    }
    if (decoder && decoder.encoding !== 'utf-8') return repaired(decoder.decode(body), `invalid ${decoder.encoding}`);
  }
  if (isUtf8(body)) return { text: body.toString('utf8') };
  return repaired(body.toString('utf8'), 'invalid UTF-8');
}

function repaired(decoded: string, what: string): { text: string; warning?: string } {
  const { text, removed } = removeReplacements(decoded);
  if (removed === 0) return { text };
  return { text, warning: what === 'invalid UTF-8' ? invalidUtf8Warning(removed) : `${what} (${removed} replacement character${removed === 1 ? '' : 's'} removed)` };
}

/** The charset an HTML page declares in a <meta> tag within its first 1024 bytes, if any. */
export function sniffHtmlCharset(buf: Buffer): string | undefined {
  const head = buf.subarray(0, 1024).toString('latin1');
  const m = /<meta\b[^>]*?charset\s*=\s*["']?\s*([A-Za-z0-9_:.+-]+)/i.exec(head);
  return m?.[1];
}
