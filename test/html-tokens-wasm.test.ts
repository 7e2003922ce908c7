import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { htmlToText, htmlUtf8ToText } from '../indexer/corpus/html.js';
import { HtmlTokens } from '../indexer/corpus/html-tokens-wasm.js';

/** The WebAssembly extraction's title and text of a page, or undefined where it leaves the page to the JS way. */
function extracted(tokens: HtmlTokens, h: string | Buffer): { title: string; text: string } | undefined {
  const read = tokens.extract(Buffer.from(h));
  if (read === undefined) return undefined;
  return { title: Buffer.from(read.title).toString('utf8'), text: Buffer.from(read.text).toString('utf8') };
}

const names = ['p', 'div', 'B', 'span', 'br', 'title', 'TiTle', 'script', 'style', 'svg', 'SVG', 'math', 'mi', 'desc', 'foreignObject', 'clipPath', 'textarea', 'xmp', 'iframe', 'plaintext', 'noembed', 'li', 'td', 'tr', 'table', 'a', 'image', 'img', 'form', 'template', 'h1', 'option', 'select', 'scr'];
const attribute = fc.constantFrom('', ' class="x"', " t='a > b'", ' d=1', ' alt="&amp;&lt;"', ' c', ' a=b/', ' /', ' a="', " b='", ' =x');
const entity = fc.oneof(
  fc.constantFrom('&lt;', '&gt;', '&amp;', '&quot;', '&apos;', '&nbsp;', '&copy;', '&ndash;', '&mdash;', '&LT;', '&Amp;', '&amp', '&lt', '&notit;', '&notin;', '&nGt;', '&eacute', '&hellip;', '&;', '&#;', '&#x;', '&#', '&#x'),
  fc.tuple(fc.constantFrom('&#', '&#x', '&#X'), fc.integer({ min: 0, max: 0x11ffff }), fc.constantFrom(';', '', 'x;', ' ')).map(([p, cp, end]) => `${p}${p === '&#' ? cp.toString(10) : cp.toString(16)}${end}`),
  fc.tuple(fc.constantFrom('&#', '&#x'), fc.constantFrom('0', '00065', '80', '9f', '128', 'd800', 'dfff', '10ffff', '110000', '1114111', '99999999999')).map(([p, d]) => `${p}${d};`),
);
const piece = fc.oneof(
  fc.tuple(fc.constantFrom(...names), attribute).map(([n, a]) => `<${n}${a}>`),
  fc.constantFrom(...names).map((n) => `</${n}>`),
  fc.constantFrom(...names).map((n) => `<${n}/>`),
  fc.constantFrom(...names).map((n) => `<${n}`),
  entity,
  fc.constantFrom('word', ' ', '\n', 'caf&eacute;', 'a&b', '&', '<!-- c -->', '<!--->', '<!doctype x>', '<![CDATA[cd <b>]]>', '<?x?>', '<', '</', '</>', '>', 'é東', '\u{1F600}', '</&', '</t&amp;'),
  fc.string({ maxLength: 6 }),
);
const page = fc.array(piece, { maxLength: 40 }).map((p) => p.join(''));

describe('the WebAssembly text extraction (indexer/corpus/html-tokens-wasm.ts)', () => {
  it("gives the JS scan's and the decoded page's title and text, whole and cut anywhere (fast-check)", () => {
    let extractedPages = 0;
    let pages = 0;
    const tokens = new HtmlTokens();
    fc.assert(
      fc.property(page, fc.nat(), (h, cut) => {
        const bytes = Buffer.from(h);
        for (const b of [bytes, bytes.subarray(0, cut % (bytes.length + 1))]) {
          const page = Buffer.from(b);
          pages++;
          if (tokens.extract(page) !== undefined) extractedPages++;
          expect(htmlUtf8ToText(page)).toEqual(htmlUtf8ToText(page, undefined));
          expect(htmlUtf8ToText(page)).toEqual(htmlToText(page.toString('utf8')));
        }
      }),
      { numRuns: 3000 },
    );
    // Most pages are read by the WebAssembly side (the rest: non-ASCII tag names, the title quirk).
    expect(extractedPages).toBeGreaterThan(pages * 0.8);
  });

  it('decodes entities in text and title as the decoder does, the common ones itself (fast-check)', () => {
    const tokens = new HtmlTokens();
    const withEntities = fc.array(fc.oneof(entity, fc.constantFrom('x', ' ', '<p>', '<title>', '</title>', '<b>', ';', '#', '<')), { maxLength: 20 }).map((p) => p.join(''));
    fc.assert(
      fc.property(withEntities, (h) => {
        const read = extracted(tokens, h);
        const reference = htmlToText(h);
        if (read === undefined) return;
        expect(read.text).toBe(reference.text);
        expect(read.title.replace(/\s+/g, ' ').trim()).toBe(reference.title);
      }),
      { numRuns: 3000 },
    );
    expect(extracted(tokens, '&lt;&#65;&#x1F600;&#0;&#128;&nGt;&notit;&amp x')).toEqual({ title: '', text: '<A\u{1F600}\uFFFD\u20AC\u226B\u20D2\u00ACit;& x' });
  });

  it('reads pages with foreign content itself, with the Parser\'s element stack', () => {
    const tokens = new HtmlTokens();
    for (const h of [
      '<svg><title>in &amp; svg</title><style>a<b>c</b></style></svg><title>Real &lt;title&gt;</title><p>after',
      '<math><mi><script>hidden()</script>shown</mi><![CDATA[kept <here>]]></math><![CDATA[dropped]]> end',
      '<svg><foreignObject><textarea>a<b>c</b></textarea></foreignObject></svg>',
      '<svg><desc><xmp>x<y></xmp></desc></svg><xmp>raw<b>text</b></xmp>',
      '<svg><clippath><p>in</clipPath></p>out</svg><image>x</image><p>after',
      // Inside an integration point, </clippath> closes the SVG clipPath (its spelling on the stack), then </p> finds no <p>.
      '<svg><clipPath><foreignObject><p>x</clippath></p></svg><math><mi><p>y</clippath></p></math>',
      '<math><title>a<title>b</title>c</math><title>second</title>',
      '<p>a<div/>b</p></p></br>c<form>d<form>e</form>f',
    ]) {
      const read = extracted(tokens, h);
      expect(read).toBeDefined();
      const reference = htmlToText(h);
      expect(read!.text).toBe(reference.text);
      expect(read!.title.replace(/\s+/g, ' ').trim()).toBe(reference.title);
    }
  });

  it('leaves to the JS way a title entity the Tokenizer keeps after part of the end tag, and non-ASCII tag names', () => {
    const tokens = new HtmlTokens();
    const quirk = Buffer.from('<title>a</&amp;b</title><p>x &amp; y');
    expect(tokens.extract(quirk)).toBeUndefined();
    expect(htmlUtf8ToText(quirk)).toEqual(htmlToText(quirk.toString('utf8')));
    expect(htmlUtf8ToText(quirk).title).toBe('a</&amp;b'); // the Tokenizer's, undecoded
    expect(extracted(tokens, '<title>a &amp; b</title>')).toEqual({ title: 'a & b', text: '  ' });
    expect(tokens.extract(Buffer.from('<pé>x'))).toBeUndefined();
    expect(htmlUtf8ToText(Buffer.from('<pé>x</PÉ>y'))).toEqual(htmlToText('<pé>x</PÉ>y'));
  });

  it('leaves a page over 4 MiB to the JS scan, with the same title and text', () => {
    const h = '<title>Big &amp; page</title>' + '<p>caf\u00e9 &lt;x&gt; word</p><script>no</script>'.repeat(100_000);
    const page = Buffer.from(h);
    expect(page.length).toBeGreaterThan(4 << 20);
    const text = htmlUtf8ToText(page);
    expect(text).toEqual(htmlToText(h));
    expect(text.title).toBe('Big & page');
  });

  it('numbers tag names case-insensitively, leaves a page of more new names than its table holds to the JS way, and forgets them after', () => {
    const tokens = new HtmlTokens();
    const cased = '<P>a<DiV>b</div></p>c<X-Y>d</x-y>';
    expect(extracted(tokens, cased)).toEqual({ title: '', text: ' a  b   cd' });
    expect(htmlToText(cased)).toEqual({ title: '', text: ' a  b   cd' });
    // 3,000 new names in one page: past the table's room, so the JS way.
    const many = Array.from({ length: 3000 }, (_, i) => `<x${i}>w${i}</x${i}><br>`).join('');
    expect(tokens.extract(Buffer.from(many))).toBeUndefined();
    expect(htmlUtf8ToText(Buffer.from(many))).toEqual(htmlToText(many));
    // Pages of 1,000 new names each, one after another: the names of earlier pages are forgotten.
    for (let k = 0; k < 5; k++) {
      const h = Array.from({ length: 1000 }, (_, i) => `<y${k}-${i}><p>w${i}</y${k}-${i}>`).join('');
      const read = extracted(tokens, h);
      expect(read).toBeDefined();
      expect(read!.text).toBe(htmlToText(h).text);
    }
    // A name longer than the table takes: the JS way, the same text.
    const long = `<${'n'.repeat(40)}><p>a</${'n'.repeat(40)}>b`;
    expect(tokens.extract(Buffer.from(long))).toBeUndefined();
    expect(htmlUtf8ToText(Buffer.from(long))).toEqual(htmlToText(long));
  });

  it('reads a page of entities whose text is longer than they are, or leaves it to the JS way, with the same text', () => {
    const tokens = new HtmlTokens();
    // &nGt; is 5 bytes and its text 6: a page of them overflows the room for its text.
    for (const h of ['&nGt;'.repeat(20_000), '<title>' + '&nGt;'.repeat(20_000) + '</title>x', 'a&nGt;b'.repeat(10)]) {
      expect(htmlUtf8ToText(Buffer.from(h))).toEqual(htmlToText(h));
      const read = extracted(tokens, h);
      if (read) expect(read.text).toBe(htmlToText(h).text);
    }
    // A fresh instance makes room for 100 KB of text for this 100 KB page: it goes the JS way.
    expect(new HtmlTokens().extract(Buffer.from('&nGt;'.repeat(20_000)))).toBeUndefined();
    expect(extracted(tokens, 'a&nGt;b'.repeat(10))!.text).toBe('a\u226B\u20D2b'.repeat(10));
  });

  it('leaves a page nested deeper than its stack to the JS way, with the same text', () => {
    const tokens = new HtmlTokens();
    const deep = '<div>'.repeat(9000) + 'deep' + '</div>'.repeat(9000) + 'after';
    expect(tokens.extract(Buffer.from(deep))).toBeUndefined();
    expect(htmlUtf8ToText(Buffer.from(deep))).toEqual(htmlToText(deep));
    const nested = '<div>'.repeat(8000) + 'deep' + '</div>'.repeat(8000) + 'after';
    expect(extracted(tokens, nested)!.text).toBe(htmlToText(nested).text);
  });
});
