/**
 * Visible text and <title> of an HTML page through htmlparser2's Tokenizer, a real and
 * forgiving HTML tokenizer (unclosed tags, entities, attributes with '>' in them): the contents
 * of script, style, noscript, template, svg, iframe and object are dropped, entities are
 * decoded, and block-level elements separate words (inline ones such as <b> or <span> do not).
 *
 * The Tokenizer is driven directly, not through htmlparser2's Parser: the Parser slices and
 * lowercases every attribute, builds an attributes object for every tag and a string for every
 * event, none of which the text needs. What the Parser adds that the text does depend on is its
 * stack of open elements (an end tag closes the elements opened inside it; some start tags
 * close open ones, e.g. <p> an open <p>; void elements close at once; SVG and MathML content is
 * foreign), which `ElementStack` keeps the same way, so the text and title are exactly the
 * Parser's (test/html-text.test.ts, against the unmodified Parser with fast-check).
 */
import { createRequire } from 'node:module';
import type { Tokenizer as HtmlTokenizer, TokenizerCallbacks } from 'htmlparser2';

// Required on first use: a crawl without HTML (and every parse worker's start-up) skips loading it.
const require = createRequire(import.meta.url);

const HIDDEN = new Set(['script', 'style', 'noscript', 'template', 'svg', 'iframe', 'object']);
const BLOCK = new Set([
  'address', 'article', 'aside', 'blockquote', 'body', 'br', 'caption', 'dd', 'details', 'dialog', 'div', 'dl', 'dt', 'fieldset',
  'figcaption', 'figure', 'footer', 'form', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'header', 'hr', 'html', 'img', 'input', 'label', 'legend', 'li',
  'main', 'menu', 'nav', 'ol', 'option', 'p', 'pre', 'section', 'select', 'summary', 'table', 'tbody', 'td', 'textarea', 'tfoot', 'th',
  'thead', 'title', 'tr', 'ul',
]);

// The HTML rules of htmlparser2's Parser (lib/Parser.ts, version 12) for its element stack.
const FORM_TAGS = new Set(['input', 'option', 'optgroup', 'select', 'button', 'datalist', 'textarea']);
const P_TAG = new Set(['p']);
const HEADING_TAGS = new Set(['h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'p']);
const TABLE_SECTION_TAGS = new Set(['thead', 'tbody']);
const DDT_TAGS = new Set(['dd', 'dt']);
const RTP_TAGS = new Set(['rt', 'rp']);
/** A start tag closes the open elements on top of the stack that are in its set. */
const OPEN_IMPLIES_CLOSE = new Map<string, Set<string>>([
  ['tr', new Set(['tr', 'th', 'td'])], ['th', new Set(['th'])], ['td', new Set(['thead', 'th', 'td'])], ['body', new Set(['head', 'link', 'script'])],
  ['a', new Set(['a'])], ['li', new Set(['li'])], ['p', P_TAG], ['h1', HEADING_TAGS], ['h2', HEADING_TAGS], ['h3', HEADING_TAGS],
  ['h4', HEADING_TAGS], ['h5', HEADING_TAGS], ['h6', HEADING_TAGS], ['select', FORM_TAGS], ['input', FORM_TAGS], ['output', FORM_TAGS],
  ['button', FORM_TAGS], ['datalist', FORM_TAGS], ['textarea', FORM_TAGS], ['option', new Set(['option'])], ['optgroup', new Set(['optgroup', 'option'])],
  ['dd', DDT_TAGS], ['dt', DDT_TAGS], ['address', P_TAG], ['article', P_TAG], ['aside', P_TAG], ['blockquote', P_TAG], ['details', P_TAG],
  ['div', P_TAG], ['dl', P_TAG], ['fieldset', P_TAG], ['figcaption', P_TAG], ['figure', P_TAG], ['footer', P_TAG], ['form', P_TAG],
  ['header', P_TAG], ['hr', P_TAG], ['main', P_TAG], ['nav', P_TAG], ['ol', P_TAG], ['pre', P_TAG], ['section', P_TAG], ['table', P_TAG],
  ['ul', P_TAG], ['rt', RTP_TAGS], ['rp', RTP_TAGS], ['tbody', TABLE_SECTION_TAGS], ['tfoot', TABLE_SECTION_TAGS],
]);
const VOID_ELEMENTS = new Set(['area', 'base', 'basefont', 'br', 'col', 'command', 'embed', 'frame', 'hr', 'img', 'input', 'isindex', 'keygen', 'link', 'meta', 'param', 'source', 'track', 'wbr']);
/** HTML integration points: HTML content inside SVG or MathML (SVG-adjusted names). */
const HTML_INTEGRATION = new Set(['mi', 'mo', 'mn', 'ms', 'mtext', 'annotation-xml', 'foreignObject', 'desc', 'title']);
const SVG_NAMES = new Map(
  [
    'altGlyph', 'altGlyphDef', 'altGlyphItem', 'animateColor', 'animateMotion', 'animateTransform', 'clipPath', 'feBlend', 'feColorMatrix',
    'feComponentTransfer', 'feComposite', 'feConvolveMatrix', 'feDiffuseLighting', 'feDisplacementMap', 'feDistantLight', 'feDropShadow',
    'feFlood', 'feFuncA', 'feFuncB', 'feFuncG', 'feFuncR', 'feGaussianBlur', 'feImage', 'feMerge', 'feMergeNode', 'feMorphology', 'feOffset',
    'fePointLight', 'feSpecularLighting', 'feSpotLight', 'feTile', 'feTurbulence', 'foreignObject', 'glyphRef', 'linearGradient',
    'radialGradient', 'textPath',
  ].map((n) => [n.toLowerCase(), n]),
);
const NONE = 0;
const SVG = 1;
const MATHML = 2;

export interface HtmlText {
  title: string;
  text: string;
}

/**
 * The Tokenizer's callbacks: the Parser's element stack (top at the end here), and the text
 * events it would give the extraction (open, close, text) handled at once.
 */
class Extraction implements TokenizerCallbacks {
  html = '';
  parts: string[] = [];
  title: string[] | undefined;
  titleDone = false;
  hidden = 0;
  inTitle = false;
  /** Open elements, innermost last. */
  readonly stack: string[] = [];
  /** Foreign-content contexts, innermost last; the first is the document's (NONE). */
  readonly foreign: number[] = [NONE];
  /** The start tag being read ('' for none, or a second <form>, which the Parser ignores). */
  tagName = '';
  opening = false;

  reset(html: string): void {
    this.html = html;
    this.parts = [];
    this.title = undefined;
    this.titleDone = false;
    this.hidden = 0;
    this.inTitle = false;
    this.stack.length = 0;
    this.foreign.length = 1;
    this.tagName = '';
    this.opening = false;
  }

  // What the extraction does with the Parser's events.
  private opened(name: string): void {
    if (name === 'title' && this.hidden === 0 && !this.titleDone) {
      // the page's first <title> (not an <svg>'s)
      this.inTitle = true;
      this.title = [];
    } else if (HIDDEN.has(name)) this.hidden++;
    if (BLOCK.has(name)) this.parts.push(' ');
  }

  private closed(name: string): void {
    if (name === 'title' && this.inTitle) {
      this.inTitle = false;
      this.titleDone = true;
    } else if (HIDDEN.has(name) && this.hidden > 0) this.hidden--;
    if (BLOCK.has(name)) this.parts.push(' ');
  }

  private text(s: string): void {
    if (this.inTitle) this.title!.push(s);
    else if (this.hidden === 0) this.parts.push(s);
  }

  // The Parser's element stack.
  isInForeignContext(): boolean {
    return this.foreign[this.foreign.length - 1] !== NONE;
  }

  private tagNameAt(start: number, end: number): string {
    const name = this.html.slice(start, end).toLowerCase();
    const context = this.foreign[this.foreign.length - 1]!;
    if (context === SVG) return SVG_NAMES.get(name) ?? name;
    if (this.foreign.length > 1) {
      const adjusted = SVG_NAMES.get(name);
      if (adjusted !== undefined && this.stack.includes(adjusted)) return adjusted;
    }
    if (context === NONE) return name === 'image' ? 'img' : name;
    return name;
  }

  private pop(): void {
    const name = this.stack.pop()!;
    if (name === 'svg' || name === 'math' || HTML_INTEGRATION.has(name)) this.foreign.pop();
    this.closed(name);
  }

  private open(name: string): void {
    this.tagName = name;
    this.opening = false;
    if (name === 'form' && this.stack.includes('form')) {
      this.tagName = '';
      return;
    }
    const closes = OPEN_IMPLIES_CLOSE.get(name);
    if (closes) while (this.stack.length > 0 && closes.has(this.stack[this.stack.length - 1]!)) this.pop();
    if (!VOID_ELEMENTS.has(name)) {
      this.stack.push(name);
      if (name === 'svg') this.foreign.push(SVG);
      else if (name === 'math') this.foreign.push(MATHML);
      else if (HTML_INTEGRATION.has(name)) this.foreign.push(NONE);
    }
    this.opening = true;
  }

  private endOpen(): void {
    const name = this.tagName;
    if (this.opening) {
      this.opened(name);
      this.opening = false;
    }
    if (VOID_ELEMENTS.has(name)) this.closed(name);
    this.tagName = '';
  }

  /** The start tag ends with '/>': closed at once in foreign content (recognizeSelfClosing is off). */
  private closeCurrent(): void {
    const name = this.tagName;
    this.endOpen();
    if (this.stack[this.stack.length - 1] === name) this.pop();
  }

  // TokenizerCallbacks
  ontext(start: number, end: number): void {
    if (start < end) this.text(this.html.slice(start, end));
    else this.text('');
  }
  ontextentity(codepoint: number): void {
    this.text(String.fromCodePoint(codepoint));
  }
  onopentagname(start: number, end: number): void {
    this.open(this.tagNameAt(start, end));
  }
  onopentagend(): void {
    this.endOpen();
  }
  onselfclosingtag(): void {
    if (this.isInForeignContext()) this.closeCurrent();
    else this.endOpen();
  }
  onclosetag(start: number, end: number): void {
    const name = this.tagNameAt(start, end);
    if (!VOID_ELEMENTS.has(name)) {
      const at = this.stack.lastIndexOf(name);
      if (at !== -1) while (this.stack.length > at) this.pop();
      else if (name === 'p') {
        // </p> without a <p>: an empty paragraph
        this.open('p');
        this.closeCurrent();
      }
    } else if (name === 'br') {
      // </br> is a <br>
      this.opened('br');
      this.closed('br');
    }
  }
  oncdata(start: number, end: number, offset: number): void {
    // CDATA is text in foreign content and a comment elsewhere (HTML, recognizeCDATA off).
    if (this.isInForeignContext()) this.text(this.html.slice(start, end - offset));
  }
  onend(): void {
    for (let i = this.stack.length - 1; i >= 0; i--) this.closed(this.stack[i]!);
  }
  onattribname(): void {}
  onattribdata(): void {}
  onattribentity(): void {}
  onattribend(): void {}
  oncomment(): void {}
  ondeclaration(): void {}
  onprocessinginstruction(): void {}
}

let extraction: Extraction | undefined;
let tokenizer: HtmlTokenizer | undefined;

export function htmlToText(html: string): HtmlText {
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
  const { title, parts } = x;
  x.reset('');
  return { title: title ? title.join('').replace(/\s+/g, ' ').trim() : '', text: parts.join('') };
}
