import fc from 'fast-check';
import { Parser } from 'htmlparser2';
import { describe, expect, it } from 'vitest';
import { htmlToText } from '../indexer/corpus/html.js';

/** The extraction on the unmodified Parser (attributes parsed, its own element stack): the reference for the Tokenizer-driven one. */
function referenceHtmlToText(html: string): { title: string; text: string } {
  const HIDDEN = new Set(['script', 'style', 'noscript', 'template', 'svg', 'iframe', 'object']);
  const BLOCK = new Set(['address', 'article', 'aside', 'blockquote', 'body', 'br', 'caption', 'dd', 'details', 'dialog', 'div', 'dl', 'dt', 'fieldset', 'figcaption', 'figure', 'footer', 'form', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'header', 'hr', 'html', 'img', 'input', 'label', 'legend', 'li', 'main', 'menu', 'nav', 'ol', 'option', 'p', 'pre', 'section', 'select', 'summary', 'table', 'tbody', 'td', 'textarea', 'tfoot', 'th', 'thead', 'title', 'tr', 'ul']);
  const parts: string[] = [];
  let title: string[] | undefined;
  let titleDone = false;
  let hidden = 0;
  let inTitle = false;
  const parser = new Parser(
    {
      onopentag(name) {
        if (name === 'title' && hidden === 0 && !titleDone) {
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

// Tags the Parser treats specially: implied closes (p, li, td, tr, h1, dd, option, select, button, datalist,
// body, rt), void elements, foreign content and its integration points (svg, math, mi, desc, foreignObject,
// clipPath), raw text (script, style, title, textarea, xmp, iframe), a second form.
const names = [
  'p', 'P', 'div', 'b', 'span', 'br', 'title', 'TITLE', 'script', 'style', 'svg', 'noscript', 'li', 'td', 'tr', 'th', 'table', 'tbody', 'thead',
  'select', 'button', 'option', 'optgroup', 'datalist', 'input', 'form', 'img', 'math', 'mi', 'desc', 'foreignObject', 'foreignobject',
  'clipPath', 'textarea', 'a', 'image', 'h1', 'H2', 'dd', 'dt', 'rt', 'rp', 'body', 'head', 'link', 'template', 'iframe', 'object', 'xmp', 'hr',
];
const attribute = fc.constantFrom('', ' class="x"', " title='a > b'", ' data-x=1', ' alt="&amp;&lt;&#233;&eacute"', ' checked', ' a=b c="d"', ' HREF="/x?a=1&b=2"', " x='\"'", ' /', ' style="color:red"');
const piece = fc.oneof(
  fc.tuple(fc.constantFrom(...names), attribute).map(([n, a]) => `<${n}${a}>`),
  fc.constantFrom(...names).map((n) => `</${n}>`),
  fc.constantFrom(...names).map((n) => `<${n}/>`),
  fc.constantFrom('word', 'Two words', ' ', '\n', 'caf&eacute;', '&amp;', '&lt;tag&gt;', '&nbsp;', '&#x41;&#66;', '&copy', 'a&b', '<!-- c -->', '<!doctype html>', '<![CDATA[x]]>', '<?php x ?>', '<', '>', '</', 'é東', "it's"),
  fc.string({ maxLength: 8 }),
);
const html = fc.array(piece, { maxLength: 40 }).map((p) => p.join(''));

describe('HTML text extraction (indexer/corpus/html.ts)', () => {
  it('gives the text and title of the unmodified Parser', () => {
    fc.assert(
      fc.property(html, (h) => {
        expect(htmlToText(h)).toEqual(referenceHtmlToText(h));
      }),
      { numRuns: 20000 },
    );
  });

  it('drops attribute values from the text, keeps entities of the text, and ignores a second <title>', () => {
    const page = '<html><head><title a="x">The &amp; <b>Title</b></title></head><body><p class="hidden-word">Caf&eacute; <img alt="alttext">menu</p><title>Second</title><script>var s = "no";</script></body></html>';
    // <title> holds text only (RCDATA): its <b> is text.
    expect(htmlToText(page)).toEqual({ title: 'The & <b>Title</b>', text: '     Café   menu  Second   ' });
    expect(referenceHtmlToText(page)).toEqual(htmlToText(page));
    // A tag cut off by the end of the page is never opened: one separator (from the end's close), not two.
    for (const cut of ['<ul ', 'jx<ul/@j', '<title a', '<p class="x'])
      expect(htmlToText(cut)).toEqual(referenceHtmlToText(cut));
    expect(htmlToText('<ul ')).toEqual({ title: '', text: ' ' });
  });

  it('keeps the Parser\'s element stack in foreign content and its integration points', () => {
    // SVG names are case-adjusted (foreignobject is the integration point foreignObject, where
    // <style> is raw text again); CDATA is text in foreign content only; <image> is <img> outside it.
    for (const page of [
      '<svg><foreignobject><style></svg>hidden</style></foreignobject></svg>visible',
      '<svg><clippath><p>x</clipPath></svg>after<p>y',
      '<math><mi><script></math>x</script>y</mi></math>z',
      '<svg><![CDATA[in svg]]></svg><![CDATA[outside]]>text',
      'a<image>b<svg><image>c</svg>d',
      '<form>a<form>b</form>c</form>d',
      '<select><option>a<button>b</select>c',
    ]) {
      expect(htmlToText(page)).toEqual(referenceHtmlToText(page));
    }
  });
});
