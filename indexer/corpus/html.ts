/**
 * Visible text and <title> of an HTML page: the contents of script, style, noscript, template,
 * svg, iframe and object are dropped, entities are decoded, and block-level elements separate
 * words (inline ones such as <b> or <span> do not). html-scan.ts reads the page's tokens and
 * html-elements.ts keeps its elements; both follow htmlparser2 (version 12) exactly, whose
 * Tokenizer (html-tokenizer.ts) and Parser are the references the tests hold them to.
 */
export { htmlToText, htmlUtf8ToText } from './html-scan.js';
export type { HtmlText } from './html-elements.js';
