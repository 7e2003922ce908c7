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
  ParserClass ??= (require('htmlparser2') as typeof import('htmlparser2')).Parser;
  const parser = new ParserClass(
    {
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
