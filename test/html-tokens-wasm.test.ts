import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { htmlToText, htmlUtf8ToText } from '../indexer/corpus/html.js';
import { ASK, BAIL, DONE, EV_OPEN, EV_OPEN_TAG, FULL, HtmlTokens } from '../indexer/corpus/html-tokens-wasm.js';

/** What the WebAssembly pass answers for a whole page: its answers in order (ASKs answered "not foreign") and the events' kinds. */
function runOf(tokens: HtmlTokens, page: Buffer): { answers: number[]; kinds: number[]; numbers: number[] } {
  const answers: number[] = [];
  const kinds: number[] = [];
  const numbers: number[] = [];
  for (let r = tokens.scan(page); ; r = r === ASK ? tokens.answer(false) : tokens.resume()) {
    answers.push(r);
    for (let e = 0; e < tokens.events.length; e += 4) {
      kinds.push(tokens.events[e]!);
      if (tokens.events[e] === EV_OPEN || tokens.events[e] === EV_OPEN_TAG) numbers.push(tokens.events[e + 3]!);
    }
    if (r !== FULL && r !== ASK) return { answers, kinds, numbers };
  }
}

const names = ['p', 'div', 'B', 'span', 'br', 'title', 'TiTle', 'script', 'style', 'svg', 'SVG', 'math', 'mi', 'desc', 'foreignObject', 'textarea', 'xmp', 'iframe', 'plaintext', 'noembed', 'li', 'td', 'table', 'a', 'image', 'form', 'template', 'scr'];
const attribute = fc.constantFrom('', ' class="x"', " t='a > b'", ' d=1', ' alt="&amp;&lt;"', ' c', ' a=b/', ' /', ' a="', " b='", ' =x');
const piece = fc.oneof(
  fc.tuple(fc.constantFrom(...names), attribute).map(([n, a]) => `<${n}${a}>`),
  fc.constantFrom(...names).map((n) => `</${n}>`),
  fc.constantFrom(...names).map((n) => `<${n}/>`),
  fc.constantFrom(...names).map((n) => `<${n}`),
  fc.constantFrom('word', ' ', '\n', 'caf&eacute;', '&amp;', '&lt;x&gt;', '&#x41;&#66', '&copy', 'a&b', '&', '<!-- c -->', '<!--->', '<!doctype x>', '<![CDATA[cd <b>]]>', '<?x?>', '<', '</', '</>', '>', 'é東', '\u{1F600}', '</&', '</t&amp;'),
  fc.string({ maxLength: 6 }),
);
const page = fc.array(piece, { maxLength: 40 }).map((p) => p.join(''));

describe('the WebAssembly markup pass (indexer/corpus/html-tokens-wasm.ts)', () => {
  it('gives the JS scan\'s title and text on the same bytes, whole and cut anywhere (fast-check)', () => {
    fc.assert(
      fc.property(page, fc.nat(), (h, cut) => {
        const bytes = Buffer.from(h);
        for (const b of [bytes, bytes.subarray(0, cut % (bytes.length + 1))]) {
          const page = Buffer.from(b);
          expect(htmlUtf8ToText(page)).toEqual(htmlUtf8ToText(page, undefined));
          expect(htmlUtf8ToText(page)).toEqual(htmlToText(page.toString('utf8')));
        }
      }),
      { numRuns: 3000 },
    );
  });

  it('reads pages with foreign content itself, asking the element stack before a raw-text element there', () => {
    const tokens = new HtmlTokens();
    // Before any <svg>: no question. After one: one question per raw-text start tag.
    expect(runOf(tokens, Buffer.from('<title>t</title><script>x</script><p>a')).answers).toEqual([DONE]);
    expect(runOf(tokens, Buffer.from('<svg><title>t &amp; </title></svg><script>x<b></script>')).answers).toEqual([ASK, ASK, DONE]);
    for (const h of [
      '<svg><title>in &amp; svg</title><style>a<b>c</b></style></svg><title>Real &lt;title&gt;</title><p>after',
      '<math><mi><script>hidden()</script>shown</mi><![CDATA[kept <here>]]></math><![CDATA[dropped]]> end',
      '<svg><foreignObject><textarea>a<b>c</b></textarea></foreignObject></svg>',
      '<svg><desc><xmp>x<y></xmp></desc></svg><xmp>raw<b>text</b></xmp>',
    ]) {
      expect(htmlUtf8ToText(Buffer.from(h))).toEqual(htmlUtf8ToText(Buffer.from(h), undefined));
    }
  });

  it('sends a page the JS way only for an entity the Tokenizer leaves in a title after part of its end tag', () => {
    const tokens = new HtmlTokens();
    const quirk = Buffer.from('<title>a</&amp;b</title><p>x &amp; y');
    expect(runOf(tokens, quirk).answers).toEqual([BAIL]);
    expect(htmlUtf8ToText(quirk)).toEqual(htmlToText(quirk.toString('utf8')));
    expect(htmlUtf8ToText(quirk).title).toBe('a</&amp;b'); // the Tokenizer's, undecoded
    expect(runOf(tokens, Buffer.from('<title>a &amp; b</title>')).answers).toEqual([DONE]);
  });

  it('hands out the events of a page with more than a batch of them, in batches', () => {
    const h = '<title>many</title>' + Array.from({ length: 12000 }, (_, i) => `<b class="c${i % 7}">w${i} &amp;</b>`).join('');
    const run = runOf(new HtmlTokens(), Buffer.from(h));
    expect(run.answers.filter((a) => a === FULL).length).toBeGreaterThan(1);
    expect(run.answers.at(-1)).toBe(DONE);
    expect(htmlUtf8ToText(Buffer.from(h))).toEqual(htmlUtf8ToText(Buffer.from(h), undefined));
  });

  it('leaves a page over 8 MiB to the JS scan, with the same title and text', () => {
    const h = '<title>Big &amp; page</title>' + '<p>caf\u00e9 &lt;x&gt; word</p><script>no</script>'.repeat(200_000);
    const page = Buffer.from(h);
    expect(page.length).toBeGreaterThan(8 << 20);
    const text = htmlUtf8ToText(page);
    expect(text).toEqual(htmlToText(h));
    expect(text.title).toBe('Big & page');
  });

  it('numbers tag names case-insensitively, and gives no number once its table is full', () => {
    const tokens = new HtmlTokens();
    const [p, div] = runOf(tokens, Buffer.from('<p><div>')).numbers;
    expect(runOf(tokens, Buffer.from('<P><DiV><p>')).numbers).toEqual([p, div, p]);
    expect(p).not.toBe(div);
    expect(runOf(tokens, Buffer.from('<pé>')).numbers).toEqual([-1]);
    // 3,000 new names: past the table's room (half its 4,096 slots) they get -1, and the text is the same.
    const many = Array.from({ length: 3000 }, (_, i) => `<x${i}>w${i}</x${i}><br>`).join('');
    const numbers = runOf(tokens, Buffer.from(many)).numbers;
    expect(numbers.filter((n) => n < 0).length).toBeGreaterThan(0);
    expect(new Set(numbers.filter((n) => n >= 0)).size + 1).toBe(new Set(numbers).size);
    expect(htmlUtf8ToText(Buffer.from(many))).toEqual(htmlUtf8ToText(Buffer.from(many), undefined));
  });
});
