/**
 * Visible text and <title> of an HTML page through htmlparser2, a real and forgiving HTML
 * parser (unclosed tags, entities, attributes with '>' in them): the contents of script,
 * style, noscript, template, svg, iframe and object are dropped, entities are decoded, and
 * block-level elements separate words (inline ones such as <b> or <span> do not).
 */
import { createRequire } from 'node:module';
import type { Parser as HtmlParser } from 'htmlparser2';

// Required on first use: a crawl without HTML (and every parse worker's start-up) skips loading it.
const require = createRequire(import.meta.url);
let ParserClass: typeof HtmlParser | undefined;

/**
 * htmlparser2's Parser without attribute values: the Tokenizer calls these four for every
 * attribute, and the Parser slices, lowercases and concatenates its name and value, which no
 * callback here reads (onopentag gets an empty attribs object). Same events otherwise; on the multilingual crawl the attribute work was
 * ~0.25 s of a worker's 4.3 s (perf, 2-core machine). These four are htmlparser2's public
 * Tokenizer `Callbacks`, which the Parser implements; test/html-text.test.ts checks the text and
 * title against the unmodified Parser, so a release that changes them fails there.
 */
function textOnlyParser(Parser: typeof HtmlParser): typeof HtmlParser {
  return class TextOnlyParser extends Parser {
    override onattribname(): void {}
    override onattribdata(): void {}
    override onattribentity(): void {}
    override onattribend(_quote: unknown, endIndex: number): void {
      this.endIndex = endIndex;
    }
  };
}

const HIDDEN = new Set(['script', 'style', 'noscript', 'template', 'svg', 'iframe', 'object']);
const BLOCK = new Set([
  'address', 'article', 'aside', 'blockquote', 'body', 'br', 'caption', 'dd', 'details', 'dialog', 'div', 'dl', 'dt', 'fieldset',
  'figcaption', 'figure', 'footer', 'form', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'header', 'hr', 'html', 'img', 'input', 'label', 'legend', 'li',
  'main', 'menu', 'nav', 'ol', 'option', 'p', 'pre', 'section', 'select', 'summary', 'table', 'tbody', 'td', 'textarea', 'tfoot', 'th',
  'thead', 'title', 'tr', 'ul',
]);

export interface HtmlText {
  title: string;
  text: string;
}

export function htmlToText(html: string): HtmlText {
  const parts: string[] = [];
  let title: string[] | undefined; // the first <title> only
  let titleDone = false;
  let hidden = 0;
  let inTitle = false;
  ParserClass ??= textOnlyParser((require('htmlparser2') as typeof import('htmlparser2')).Parser);
  const parser = new ParserClass(
    {
      // onopentag, not onopentagname: a tag cut off by the end of the page ("<ul ") is named but
      // never opened, and its close (the parser's end closes what is open) would add a second
      // separator (fast-check found it, test/html-text.test.ts).
      onopentag(name) {
        if (name === 'title' && hidden === 0 && !titleDone) {
          // the page's first <title> (not an <svg>'s)
          inTitle = true;
          title = [];
        } else if (HIDDEN.has(name)) hidden++;
        if (BLOCK.has(name)) parts.push(' ');
      },
      ontext(text) {
        if (inTitle) title!.push(text);
        else if (hidden === 0) parts.push(text);
      },
      onclosetag(name) {
        if (name === 'title' && inTitle) {
          inTitle = false;
          titleDone = true;
        } else if (HIDDEN.has(name) && hidden > 0) hidden--;
        if (BLOCK.has(name)) parts.push(' ');
      },
    },
    { decodeEntities: true, lowerCaseTags: true, recognizeSelfClosing: false },
  );
  parser.write(html);
  parser.end();
  return { title: title ? title.join('').replace(/\s+/g, ' ').trim() : '', text: parts.join('') };
}
