import fc from 'fast-check';
import { Parser } from 'htmlparser2';
import { describe, expect, it } from 'vitest';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { htmlToText, htmlUtf8ToText } from '../indexer/corpus/html.js';
import { htmlToTextByTokenizer } from '../indexer/corpus/html-tokenizer.js';
import { decodeFile } from '../indexer/corpus/decode.js';
import { readWarcRecords } from '../indexer/corpus/warc.js';

/** The extraction on the unmodified Parser (attributes parsed, its own element stack): the reference for the scan and the Tokenizer-driven one. */
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

// Hostile markup for the scan's own states: cut tags, comments, CDATA, doctypes, raw text and its
// end tags (with the Tokenizer's \x1c for '<'), entities cut or without ';', attributes without ends.
const special = ['script', 'ScRiPt', 'style', 'title', 'textarea', 'xmp', 'iframe', 'noembed', 'noframes', 'plaintext', 'scr', 'scriptx', 'tit', 'no', 'p', 'svg', 'b'];
const hostileAttribute = fc.constantFrom('', ' a="x"', " b='y'", ' /', '/', ' / ', ' a=/>', ' a= >', ' =x', ' a="', " b='", ' a=&amp;>', ' a=b/');
const hostilePiece = fc.oneof(
  fc.tuple(fc.constantFrom(...special), hostileAttribute).map(([n, a]) => `<${n}${a}>`),
  fc.tuple(fc.constantFrom(...special), hostileAttribute).map(([n, a]) => `</${n}${a}>`),
  fc.constantFrom(...special).map((n) => `<${n}`),
  fc.constantFrom(
    '&amp', '&ampx', '&notit;', '&notin;', '&#', '&#x', '&#X41', '&#1234567890123;', '&#0;', '&#128;', '&#xD800;', '&NotEqualTilde;', '&Afr;', '&', '&&', '&;',
    '<!--', '-->', '--!>', '<!-->', '<!--->', '<!-', '<!', '<!d', '<!DOCTYPE html>', '<!doc', '<!x>', '<![CDATA[', ']]>', ']]]>', '<![CDAT', '<?', '</ x>', '</1>',
    '\x1c/script>', '\x1c\x0fscript>', '<</script>', '</script', '</SCRIPT >', '\u{1F600}', '"', "'", '=',
  ),
  fc.string({ maxLength: 4, unit: 'binary' }),
);
// Characters that move the tokenizer between states, densely.
const stateChars = fc.array(fc.constantFrom(...'<>/!-[]&;#x="\' \nscriptyleamp1CDATAdoctype\x1c\x0f?ntX'), { maxLength: 60 }).map((a) => a.join(''));

describe('HTML text extraction (indexer/corpus/html.ts)', () => {
  it('gives the text and title of the unmodified Parser, and of the Tokenizer driven directly', () => {
    fc.assert(
      fc.property(html, (h) => {
        const scanned = htmlToText(h);
        expect(scanned).toEqual(referenceHtmlToText(h));
        expect(scanned).toEqual(htmlToTextByTokenizer(h));
      }),
      { numRuns: 20000 },
    );
  });

  it('gives the Tokenizer\'s text and title on hostile markup, whole and cut anywhere', () => {
    const page = fc.oneof(fc.array(fc.oneof(piece, hostilePiece), { maxLength: 40 }).map((p) => p.join('')), stateChars);
    fc.assert(
      fc.property(page, fc.nat(), (h, cut) => {
        for (const s of [h, h.slice(0, cut % (h.length + 1))]) expect(htmlToText(s)).toEqual(htmlToTextByTokenizer(s));
      }),
      { numRuns: 30000 },
    );
    // Quirks kept from the Tokenizer: a page cut in a name that may still be special keeps it as text,
    // one cut after '/' in a tag or before an end tag's '>' keeps its last character, \x1c ends raw text as '<' does.
    expect(htmlToText('a<scr')).toEqual({ title: '', text: 'ascr' });
    expect(htmlToText('a<abc')).toEqual({ title: '', text: 'a' });
    expect(htmlToText('a<b /')).toEqual({ title: '', text: 'a/' });
    expect(htmlToText('a</b x')).toEqual({ title: '', text: 'ax' });
    expect(htmlToText('<script>\x1c/script>y')).toEqual({ title: '', text: 'y' });
    expect(htmlToText('<script>x\x1c/script>y')).toEqual({ title: '', text: '' });
    expect(htmlToText('<title>A &amp; B &notit;</title><textarea>&lt;b></textarea><xmp><i>&amp;</xmp><plaintext></plaintext>')).toEqual({
      title: 'A & B ¬it;',
      text: '   <b> <i>&amp;</plaintext>',
    });
  });

  it('reads a UTF-8 page as bytes to the same title and text as the decoded page', () => {
    // Non-ASCII text, entities that decode to non-ASCII, Unicode spaces in titles (collapsed after
    // decoding), and tag names with non-ASCII characters (which send the page the decoded way).
    const unicode = fc.constantFrom(
      'é東', '\u00a0', '&nbsp;', '&eacute;&#x1F600;&#233;', '<title>a\u00a0\u2003b &ensp;c</title>', '<é>', '<aé>x</aé>', '</école>', '<ÉCOLE>y</école>',
      '<svg><foreignObjeçt>z</svg>', '<aÉ><p>x</aé>y', '\u{1F600}', 'Ā', '<p>Ωmega</p>', '&Omega;', '\u2028', '<b\u00a0>',
    );
    const page = fc.oneof(
      fc.array(fc.oneof(piece, hostilePiece, unicode), { maxLength: 40 }).map((p) => p.join('')),
      fc.string({ maxLength: 60, unit: 'grapheme' }),
    );
    fc.assert(
      fc.property(page, fc.nat(), (h, cut) => {
        // Lone surrogates become U+FFFD in UTF-8: the reference is the page its bytes decode to.
        const bytes = Buffer.from(h, 'utf8');
        for (const b of [bytes, bytes.subarray(0, cut % (bytes.length + 1))]) {
          const s = b.toString('utf8');
          if (!Buffer.from(s, 'utf8').equals(b)) continue; // cut inside a character: not valid UTF-8
          expect(htmlUtf8ToText(b)).toEqual(htmlToText(s));
        }
      }),
      { numRuns: 20000 },
    );
    // </aé> closes <aÉ> (names lowercased by Unicode rules), and with it the <p> inside.
    const mixed = '<title>Caf&eacute;\u00a0 au\u2003lait</title><p>na&iuml;ve</p><aÉ><p>x</aé>y';
    expect(htmlUtf8ToText(Buffer.from(mixed))).toEqual({ title: 'Café au lait', text: '   naïve  x y' });
    expect(htmlToText(mixed)).toEqual(htmlUtf8ToText(Buffer.from(mixed)));
    // A page whose text outgrows the kept buffer, and a page after it.
    const big = `<p>${'caf\u00e9 '.repeat(1 << 20)}</p>`;
    for (const h of [big, '<p>small \u00e9 page</p>']) expect(htmlUtf8ToText(Buffer.from(h))).toEqual(htmlToText(h));
    // A page cut in an end tag keeps its last character: all of its bytes, or (outside the BMP) the decoded page's half of it.
    expect(htmlUtf8ToText(Buffer.from('a</b é'))).toEqual({ title: '', text: 'aé' });
    expect(htmlUtf8ToText(Buffer.from('a</b \u{1F600}'))).toEqual({ title: '', text: 'a\uDE00' });
  });

  it('gives the Tokenizer\'s text and title on real pages, whole and cut', async () => {
    const samples: string[] = [];
    const sample = join(import.meta.dirname, '..', 'corpus-samples', 'postgresql-docs', 'postgresql-15-docs.warc.gz');
    const blocks: Buffer[] = [];
    for await (const _ of readWarcRecords(sample, 'sample.warc.gz', true, statSync(sample).size, (r) => void blocks.push(Buffer.from(r.block))));
    for (const block of blocks) {
      // A response record's block is the HTTP response: its body after the headers.
      const body = block.subarray(block.indexOf('\r\n\r\n') + 4);
      if (/<html/i.test(body.toString('latin1', 0, 512))) samples.push(body.toString('utf8'));
    }
    expect(samples.length).toBeGreaterThan(5);
    let cuts = 0;
    for (const page of samples) {
      // Cut at every '<' and '&' of the first 4 KB, and a few characters after: inside tags, comments and entities.
      for (let i = 0; i < Math.min(page.length, 4096); i++) {
        const c = page[i];
        if (c !== '<' && c !== '&') continue;
        for (const at of [i + 1, i + 2, i + 5]) {
          const cut = page.slice(0, at);
          expect(htmlToText(cut)).toEqual(htmlToTextByTokenizer(cut));
          cuts++;
        }
      }
    }
    expect(cuts).toBeGreaterThan(300);
    const pages = [...samples];
    // html-docs-small where fetched (node scripts/corpus/fetch.mjs html-docs-small): every page.
    const docs = join(import.meta.dirname, '..', '.cache', 'corpora', 'html-docs-small', 'data');
    if (existsSync(docs)) {
      for (const e of readdirSync(docs, { recursive: true, withFileTypes: true })) {
        if (!e.isFile() || !/\.html?$/i.test(e.name)) continue;
        const d = decodeFile(readFileSync(join(e.parentPath, e.name)), true);
        if ('text' in d) pages.push(d.text);
      }
    }
    for (const page of pages) {
      expect(htmlToText(page)).toEqual(htmlToTextByTokenizer(page));
      expect(htmlUtf8ToText(Buffer.from(page, 'utf8'))).toEqual(htmlToText(page));
      for (const at of [page.length >> 2, page.length >> 1, (page.length * 3) >> 2]) expect(htmlToText(page.slice(0, at))).toEqual(htmlToTextByTokenizer(page.slice(0, at)));
    }
  }, 120_000);

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
