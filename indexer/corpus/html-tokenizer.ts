/**
 * The page's text and <title> with htmlparser2's Tokenizer, a real and forgiving HTML tokenizer,
 * driven directly (not through its Parser, which slices and lowercases every attribute and builds
 * a string for every event) and feeding the element stack of html-elements.ts. The build uses
 * html-scan.ts, which gives the same text and title on every page; this one stays as its
 * reference (test/html-text.test.ts, bench/html-extract.mjs).
 */
import { createRequire } from 'node:module';
import type { Tokenizer as HtmlTokenizer } from 'htmlparser2';
import { Extraction, type HtmlText } from './html-elements.js';

// Required on first use: only tests and benches load it.
const require = createRequire(import.meta.url);

let extraction: Extraction | undefined;
let tokenizer: HtmlTokenizer | undefined;

export function htmlToTextByTokenizer(html: string): HtmlText {
  if (!tokenizer) {
    const { Tokenizer } = require('htmlparser2') as typeof import('htmlparser2');
    extraction = new Extraction();
    tokenizer = new Tokenizer({ decodeEntities: true, xmlMode: false }, extraction);
  }
  const x = extraction!;
  x.reset(html);
  tokenizer.reset();
  tokenizer.write(html);
  tokenizer.end();
  return x.take();
}
