/**
 * A page's character encoding as a browser decides it (WHATWG Encoding and HTML, "determining
 * the character encoding", without the guessing step): a byte order mark, then the charset of
 * the HTTP Content-Type, then an HTML page's <meta charset> or <meta http-equiv="Content-Type">
 * within its first 1,024 bytes, then UTF-8. Labels are resolved by Node's TextDecoder, which
 * knows the WHATWG encodings and their labels (latin1 and iso-8859-1 are windows-1252, as in a
 * browser).
 */

export interface Encoding {
  /** A WHATWG encoding name ('utf-8', 'windows-1252', 'shift_jis', 'utf-16le', ...). */
  name: string;
  /** Bytes of a byte order mark to skip (the decoder is told not to look for one). */
  bom: number;
  /** Where the decision came from. */
  source: 'bom' | 'http' | 'meta' | 'default';
}

/** The encoding a label names, or undefined when TextDecoder does not know it. */
export function encodingOfLabel(label: string | undefined): string | undefined {
  if (!label) return undefined;
  try {
    return new TextDecoder(label.trim()).encoding;
  } catch {
    return undefined;
  }
}

/** The charset parameter of a Content-Type value ('text/html; charset="Shift_JIS"' -> 'Shift_JIS'). */
export function charsetParameter(contentType: string | undefined): string | undefined {
  if (!contentType) return undefined;
  const m = /;\s*charset\s*=\s*(?:"([^"]*)"|([^;\s"]*))/i.exec(contentType);
  const v = m?.[1] ?? m?.[2];
  return v ? v : undefined;
}

export function bomEncoding(buf: Uint8Array): Encoding | undefined {
  if (buf.length >= 3 && buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf) return { name: 'utf-8', bom: 3, source: 'bom' };
  if (buf.length >= 2 && buf[0] === 0xff && buf[1] === 0xfe) return { name: 'utf-16le', bom: 2, source: 'bom' };
  if (buf.length >= 2 && buf[0] === 0xfe && buf[1] === 0xff) return { name: 'utf-16be', bom: 2, source: 'bom' };
  return undefined;
}

const PRESCAN_BYTES = 1024;
const META = /<meta\b([^>]*)>?/gi;
const COMMENT = /<!--[\s\S]*?(?:-->|$)/g;

/**
 * The encoding an HTML page's first 1,024 bytes declare in a <meta> tag (outside comments):
 * `charset=`, or `http-equiv="content-type"` with a `content` holding a charset. As the prescan
 * does, a declared UTF-16 means UTF-8 (the bytes read so far were ASCII-compatible) and
 * x-user-defined means windows-1252.
 */
export function metaCharset(buf: Uint8Array): string | undefined {
  const head = Buffer.from(buf.buffer, buf.byteOffset, Math.min(buf.length, PRESCAN_BYTES)).toString('latin1').replace(COMMENT, '');
  for (const m of head.matchAll(META)) {
    const attrs = m[1]!;
    const direct = /\bcharset\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>/;]+))/i.exec(attrs);
    let label: string | undefined;
    if (direct && !/\bcontent\s*=\s*["'][^"']*\bcharset\s*=/i.test(attrs.slice(0, direct.index + direct[0].length))) {
      label = direct[1] ?? direct[2] ?? direct[3];
    } else if (/\bhttp-equiv\s*=\s*["']?\s*content-type\b/i.test(attrs)) {
      const content = /\bcontent\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))/i.exec(attrs);
      const c = content?.[1] ?? content?.[2] ?? content?.[3];
      const inner = c && /charset\s*=\s*["']?([^\s"';]+)/i.exec(c);
      label = inner ? inner[1] : undefined;
    }
    const name = encodingOfLabel(label);
    if (name === undefined) continue;
    if (name === 'utf-16le' || name === 'utf-16be') return 'utf-8';
    if (name === 'x-user-defined') return 'windows-1252';
    return name;
  }
  return undefined;
}

/** The encoding of `buf` by the browser's order; `httpContentType` as the server sent it, if any. */
export function decideEncoding(buf: Uint8Array, httpContentType: string | undefined, html: boolean): Encoding {
  const bom = bomEncoding(buf);
  if (bom) return bom;
  const http = encodingOfLabel(charsetParameter(httpContentType));
  if (http) return { name: http, bom: 0, source: 'http' };
  const meta = html ? metaCharset(buf) : undefined;
  if (meta) return { name: meta, bom: 0, source: 'meta' };
  return { name: 'utf-8', bom: 0, source: 'default' };
}

/**
 * windows-1252's 0x80-0x9f (the euro sign, curly quotes, dashes): Node 20's TextDecoder decodes
 * windows-1252 as ISO-8859-1 and gives C1 controls there (fixed in later Node releases); the
 * five bytes windows-1252 leaves undefined stay controls, as the WHATWG table has them.
 */
const CP1252_HIGH = '\u20ac\u0081\u201a\u0192\u201e\u2026\u2020\u2021\u02c6\u2030\u0160\u2039\u0152\u008d\u017d\u008f\u0090\u2018\u2019\u201c\u201d\u2022\u2013\u2014\u02dc\u2122\u0161\u203a\u0153\u009d\u017e\u0178';
const C1 = /[\u0080-\u009f]/g;

/** Text of `bytes` (no BOM) in the WHATWG encoding `name`; bytes it cannot decode become U+FFFD. */
export function decodeIn(bytes: Uint8Array, name: string): string {
  if (name === 'windows-1252') {
    const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('latin1');
    return text.replace(C1, (c) => CP1252_HIGH[c.charCodeAt(0) - 0x80]!);
  }
  return new TextDecoder(name, { ignoreBOM: true }).decode(bytes);
}
