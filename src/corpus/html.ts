/**
 * Visible text and <title> of an HTML page through htmlparser2 (a real, forgiving HTML parser:
 * unclosed tags and entities handled): script, style, noscript and template contents are
 * dropped, and block-level elements separate words.
 */
import { Parser } from 'htmlparser2';

const HIDDEN = new Set(['script', 'style', 'noscript', 'template', 'head>script', 'svg', 'math']);
const BLOCK = new Set([
  'p', 'div', 'br', 'li', 'ul', 'ol', 'dl', 'dt', 'dd', 'tr', 'td', 'th', 'table', 'section', 'article', 'header', 'footer', 'nav', 'aside',
  'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'pre', 'blockquote', 'hr', 'main', 'figure', 'figcaption', 'form', 'option', 'title', 'body', 'html', 'caption',
]);

export interface HtmlText {
  title: string;
  text: string;
}

export function htmlToText(html: string): HtmlText {
  const parts: string[] = [];
  const titleParts: string[] = [];
  let hidden = 0;
  let inTitle = 0;
  const parser = new Parser(
    {
      onopentag(name) {
        if (HIDDEN.has(name)) hidden++;
        else if (name === 'title') inTitle++;
        if (BLOCK.has(name)) parts.push(' ');
      },
      ontext(text) {
        if (hidden > 0) return;
        if (inTitle > 0) titleParts.push(text);
        else parts.push(text);
      },
      onclosetag(name) {
        if (HIDDEN.has(name)) hidden = Math.max(0, hidden - 1);
        else if (name === 'title') inTitle = Math.max(0, inTitle - 1);
        if (BLOCK.has(name)) parts.push(' ');
      },
    },
    { decodeEntities: true, lowerCaseTags: true },
  );
  parser.write(html);
  parser.end();
  return { title: titleParts.join('').replace(/\s+/g, ' ').trim(), text: parts.join('') };
}
