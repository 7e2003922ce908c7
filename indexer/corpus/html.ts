/**
 * Visible text and <title> of an HTML page: the contents of script, style, noscript, template,
 * svg, iframe and object are dropped, entities are decoded, and block-level elements separate
 * words (inline ones such as <b> or <span> do not). html-scan.ts reads the page's tokens and
 * html-elements.ts keeps its elements; both follow htmlparser2 (version 12) exactly, whose
 * Tokenizer (html-tokenizer.ts) and Parser are the references the tests hold them to.
 */
import { decodeHtmlPage } from './decode.js';
import type { HtmlText } from './html-elements.js';
import { htmlToText, htmlUtf8ToText, htmlUtf8ToTextBytes, utf8 } from './html-scan.js';

export { htmlToText, htmlUtf8ToText };
export type { HtmlText };

/** A document's text read from its bytes (decodeFile's, or readHtmlPage's with the title), or why not. */
export type PageRead = { reason: string } | { title?: string; text: string; warning?: string };

/**
 * A document's TermIds (title, then text) from its title and its text's UTF-8 bytes (a view the
 * call may not keep), or undefined where the text must be analysed as a string.
 */
export type Utf8TextInverter = (title: string, text: Uint8Array) => Uint32Array | undefined;

/**
 * An HTML page's title and text from its bytes, decoded as a browser decides (decode.ts, with the
 * charset of `httpContentType` where a WARC response gives one): a UTF-8 page is extracted from
 * its bytes (htmlUtf8ToText), any other decoded first. `warning` as decodeFile gives it.
 */
export function readHtmlPage(buf: Buffer, httpContentType?: string): PageRead {
  const decoded = decodeHtmlPage(buf, httpContentType);
  if ('reason' in decoded) return decoded;
  if ('utf8' in decoded) return htmlUtf8ToText(decoded.utf8);
  return decodedPage(decoded);
}

/**
 * readHtmlPage, where a UTF-8 page's title and text bytes go to `invert` without the text
 * becoming a string: the document's TermIds, or the page as readHtmlPage reads it where `invert`
 * declines (or the page is in another charset).
 */
export function readHtmlPageInverted(buf: Buffer, invert: Utf8TextInverter, httpContentType?: string): PageRead | { termIds: Uint32Array } {
  const decoded = decodeHtmlPage(buf, httpContentType);
  if ('reason' in decoded) return decoded;
  if (!('utf8' in decoded)) return decodedPage(decoded);
  const page = htmlUtf8ToTextBytes(decoded.utf8);
  if (!('textUtf8' in page)) return page;
  const termIds = invert(page.title, page.textUtf8);
  if (termIds !== undefined) return { termIds };
  return { title: page.title, text: utf8(page.textUtf8) };
}

function decodedPage(decoded: { text: string; warning?: string }): PageRead {
  const page = htmlToText(decoded.text);
  return decoded.warning ? { ...page, warning: decoded.warning } : page;
}
