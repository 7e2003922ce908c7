import { execFileSync } from 'node:child_process';
import { chmodSync, cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import {
  CorpusError,
  describeUnsupported,
  extensionOf,
  listCorpusFiles,
  readCorpus,
  readCorpusFile,
  unsupportedFiles,
  type CorpusItem,
  type CorpusOptions,
  type SkippedItem,
  type SourceDocument,
} from '../indexer/corpus/index.js';
import { UserError } from '../src/shared/errors.js';

const fixtures = new URL('./fixtures/corpus/', import.meta.url).pathname;
const work = mkdtempSync(join(tmpdir(), 'gpuindex-corpus-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

async function collect(gen: AsyncGenerator<CorpusItem>): Promise<{ docs: SourceDocument[]; skips: SkippedItem[]; items: CorpusItem[] }> {
  const items: CorpusItem[] = [];
  for await (const it of gen) items.push(it);
  return {
    items,
    docs: items.flatMap((i) => (i.kind === 'doc' ? [i.doc] : [])),
    skips: items.flatMap((i) => (i.kind === 'skip' ? [i.skip] : [])),
  };
}
const readOne = (rel: string, options?: CorpusOptions) => collect(readCorpusFile(fixtures, rel, options));
/** The document without its path-dependent fields, to compare a file with its .gz twin. */
const content = (d: SourceDocument) => ({ line: d.line, title: d.title, text: d.text, bytes: d.bytes, warning: d.warning });
const squash = (s: string) => s.replace(/\s+/g, ' ').trim();

describe('formats', () => {
  it('JSONL: ids from id/docid/_id/url or path:line, titles, text fields, blank lines, CRLF, 1-based lines', async () => {
    const { docs, skips } = await readOne('formats/docs.jsonl');
    expect(skips).toEqual([]);
    expect(docs.map((d) => [d.externalId, d.line, d.title, d.text])).toEqual([
      ['j1', 1, 'First', 'The white whale swims.'],
      ['42', 4, '', 'Numeric docid and contents field.'],
      ['j3', 5, 'Two parts', 'An array of strings'],
      ['https://example.org/x', 6, '', 'Url as id.'],
      ['formats/docs.jsonl:7', 7, '', 'No id at all, so path and line.'],
      ['j6', 8, '', 'contents first\nthen text\nthen body'],
    ]);
    for (const d of docs) expect(d.path).toBe('formats/docs.jsonl');
    const lines = readFileSync(join(fixtures, 'formats/docs.jsonl'), 'utf8').split('\n');
    expect(docs[0]!.bytes).toBe(Buffer.byteLength(lines[0]!));
    expect(docs[4]!.bytes).toBe(Buffer.byteLength(lines[6]!)); // the line with its \r
  });

  it('NDJSON without a final newline', async () => {
    const { docs } = await readOne('formats/docs.ndjson');
    expect(docs.map((d) => [d.externalId, d.line, d.text])).toEqual([
      ['n1', 1, 'ndjson line one'],
      ['n2', 2, 'ndjson line two'],
    ]);
  });

  it('JSON array: element by element, ids or path#index, line = element index, bytes add up to the file', async () => {
    const { docs, skips } = await readOne('formats/array.json');
    expect(skips).toEqual([]);
    expect(docs.map((d) => [d.externalId, d.line, d.title, d.text])).toEqual([
      ['a0', 0, 'Zero', 'array element zero'],
      ['formats/array.json#1', 1, '', 'array element one has no id'],
      ['7', 2, '', 'array element two, numeric id'],
    ]);
    const size = readFileSync(join(fixtures, 'formats/array.json')).length;
    const total = docs.reduce((a, d) => a + d.bytes, 0);
    expect(total).toBeLessThanOrEqual(size);
    expect(total).toBeGreaterThan(size - 4); // all but the closing bracket
  });

  it('JSON single document (with a BOM)', async () => {
    const { docs } = await readOne('formats/single.json');
    expect(docs).toEqual([
      { externalId: 'single-1', path: 'formats/single.json', title: 'One document', text: 'A single JSON document with a BOM.', bytes: readFileSync(join(fixtures, 'formats/single.json')).length },
    ]);
  });

  it('HTML: title, visible text only, entities decoded, block elements separate words, inline ones do not', async () => {
    const { docs } = await readOne('formats/page.html');
    expect(docs).toHaveLength(1);
    const d = docs[0]!;
    expect(d.externalId).toBe('formats/page.html');
    expect(d.line).toBeUndefined();
    expect(d.title).toBe('The Page & Title');
    expect(squash(d.text)).toBe('Heading Firstboldjoined été <tag> — café block separate one two Unclosed paragraph next line');
    for (const hidden of ['scriptword', 'ldword', 'noscriptword', 'templateword', 'svgword', 'svgtitle', 'commentword', 'color', 'Title']) expect(d.text).not.toContain(hidden);
  });

  it('HTML: unclosed tags and a script that never closes', async () => {
    const dir = join(work, 'html');
    mkdirSync(dir);
    writeFileSync(join(dir, 'a.html'), '<title>T</title><div><p>one<p>two<span>three</div>four<script>if (a < b) { hidden() }');
    const { docs } = await collect(readCorpusFile(dir, 'a.html'));
    expect(docs[0]!.title).toBe('T');
    expect(squash(docs[0]!.text)).toBe('one twothree four'); // <span> is inline: no space, as a browser shows it
  });

  it('HTML: a declared legacy charset is honoured', async () => {
    const { docs, skips } = await readOne('bad/latin1.html');
    expect(skips).toEqual([]);
    expect(docs[0]!.title).toBe('Café');
    expect(squash(docs[0]!.text)).toBe('Naïve');
    expect(docs[0]!.warning).toBeUndefined();
  });

  it('text and Markdown: one document per file; a Markdown heading or front-matter title becomes the title', async () => {
    expect((await readOne('formats/notes.txt')).docs).toEqual([
      { externalId: 'formats/notes.txt', path: 'formats/notes.txt', title: '', text: 'Plain text notes.\nSecond line with naïve café.\n', bytes: 49 },
    ]);
    const md = async (f: string) => (await readOne(f)).docs.map((d) => [d.title, squash(d.text)]);
    expect(await md('formats/readme.md')).toEqual([['Markdown Title', 'Some *markdown* body text.']]);
    expect(await md('formats/front.md')).toEqual([['Front Matter Title', 'Body after front matter.']]);
    expect(await md('formats/setext.md')).toEqual([['Setext Title', 'Body of setext.']]);
    expect(await md('formats/plain.md')).toEqual([['', 'Just a first line and a second.']]);
    expect((await readOne('bad/utf16.txt')).docs[0]!.text).toBe('UTF-16 text here');
  });

  it('every format gives the same documents gzipped', async () => {
    for (const f of ['docs.jsonl', 'docs.ndjson', 'array.json', 'single.json', 'page.html', 'notes.txt', 'readme.md', 'front.md', 'setext.md', 'plain.md']) {
      const plain = await readOne(`formats/${f}`);
      const gz = await readOne(`formats/${f}.gz`);
      expect(gz.skips, f).toEqual([]);
      expect(gz.docs.map(content), f).toEqual(plain.docs.map(content));
      for (const d of gz.docs) {
        expect(d.path).toBe(`formats/${f}.gz`);
        if (d.externalId.startsWith('formats/')) expect(d.externalId.startsWith(`formats/${f}.gz`)).toBe(true);
      }
    }
  });

  it('a large JSONL file and a large JSON array stream in full, lines longer than a read chunk included', async () => {
    const dir = join(work, 'large');
    mkdirSync(dir);
    const n = 3000;
    const docs = Array.from({ length: n }, (_, i) => ({ id: `d${i}`, text: `doc ${i} ` + 'ünïcödé whale '.repeat(i % 1000 === 1 ? 90_000 : 20) }));
    writeFileSync(join(dir, 'big.jsonl'), docs.map((d) => JSON.stringify(d)).join('\n') + '\n');
    writeFileSync(join(dir, 'big.json'), JSON.stringify(docs));
    writeFileSync(join(dir, 'big.json.gz'), gzipSync(JSON.stringify(docs)));
    for (const f of ['big.jsonl', 'big.json', 'big.json.gz']) {
      const r = await collect(readCorpusFile(dir, f));
      expect(r.skips, f).toEqual([]);
      expect(r.docs.length, f).toBe(n);
      expect(r.docs.every((d, i) => d.externalId === `d${i}` && d.text === docs[i]!.text), f).toBe(true);
    }
    const r = await collect(readCorpusFile(dir, 'big.json'));
    const total = r.docs.reduce((a, d) => a + d.bytes, 0);
    const size = readFileSync(join(dir, 'big.json')).length;
    expect(total).toBeLessThanOrEqual(size);
    expect(total).toBeGreaterThanOrEqual(size - 1); // the closing bracket may come in a slice of its own
  });
});

describe('field selection (--fields)', () => {
  it('takes id, title and text from the named fields; several text fields are joined in order', async () => {
    const dir = join(work, 'fields');
    mkdirSync(dir);
    writeFileSync(join(dir, 'f.jsonl'), '{"key":"k1","headline":"H","abstract":"A","body":"B","text":"T"}\n{"headline":"H2","body":"only body"}\n');
    const { docs, skips } = await collect(readCorpusFile(dir, 'f.jsonl', { fields: { id: ['key'], title: ['headline'], text: ['abstract', 'body'] } }));
    expect(skips).toEqual([]);
    expect(docs.map((d) => [d.externalId, d.title, d.text])).toEqual([
      ['k1', 'H', 'A\nB'],
      ['f.jsonl:2', 'H2', 'only body'],
    ]);
    const none = await collect(readCorpusFile(dir, 'f.jsonl', { fields: { text: ['missing'] } }));
    expect(none.skips.map((s) => [s.line, s.reason])).toEqual([
      [1, 'no text field (tried missing)'],
      [2, 'no text field (tried missing)'],
    ]);
  });

  it('rejects an empty field list', async () => {
    await expect(collect(readCorpus(fixtures, { fields: { text: [] } }))).rejects.toThrow(CorpusError);
    await expect(collect(readCorpus(fixtures, { fields: { text: [] } }))).rejects.toThrow('--fields: text needs one or more field names');
  });
});

describe('bad input becomes skip items, never exceptions', () => {
  it('JSONL: a malformed line, a line without text and a non-object are skipped by line; the lines around them are read', async () => {
    const { docs, skips } = await readOne('bad/lines.jsonl');
    expect(docs.map((d) => [d.externalId, d.line])).toEqual([
      ['ok1', 1],
      ['ok2', 5],
    ]);
    expect(skips.map((s) => s.line)).toEqual([2, 3, 4]);
    expect(skips[0]!.reason).toMatch(/^invalid JSON: Unexpected token/);
    expect(skips[1]!.reason).toBe('no text field (tried contents, text, body)');
    expect(skips[2]!.reason).toBe('not a JSON object (an array)');
    for (const s of skips) expect(s.path).toBe('bad/lines.jsonl');
  });

  it('JSON array with a broken element: the elements before it are indexed, one skip names the element, the rest is not read', async () => {
    const { docs, skips } = await readOne('bad/broken-array.json');
    expect(docs.map((d) => d.externalId)).toEqual(['e0', 'e1']);
    expect(skips).toHaveLength(1);
    expect(skips[0]!.line).toBe(2);
    expect(skips[0]!.reason).toMatch(/^invalid JSON \(.+\) at array element 2; the rest of the file is skipped$/);
  });

  it('JSON array: a broken element far into the file, past several parser slices, keeps every element before it', async () => {
    const dir = join(work, 'broken-late');
    mkdirSync(dir);
    const good = Array.from({ length: 500 }, (_, i) => JSON.stringify({ id: `g${i}`, text: `element ${i} ` + 'x'.repeat(i % 50) }));
    writeFileSync(join(dir, 'b.json'), `[${good.join(',')},{"id":"bad","text":"unterminated}, {"id":"after","text":"never"}`);
    writeFileSync(join(dir, 'b.json.gz'), gzipSync(readFileSync(join(dir, 'b.json'))));
    writeFileSync(join(dir, 'cut.json'), `[${good.join(',')}`); // truncated: no closing bracket
    for (const f of ['b.json', 'b.json.gz', 'cut.json']) {
      const { docs, skips } = await collect(readCorpusFile(dir, f));
      expect(docs.map((d) => d.externalId), f).toEqual(good.map((_, i) => `g${i}`));
      expect(skips.map((s) => s.line), f).toEqual([500]);
      expect(skips[0]!.reason, f).toMatch(/at array element 500; the rest of the file is skipped$/);
    }
  });

  it('JSON: non-object elements and a scalar document are skipped by index', async () => {
    const { docs, skips } = await readOne('bad/not-objects.json');
    expect(docs.map((d) => d.externalId)).toEqual(['o0']);
    expect(skips.map((s) => [s.line, s.reason])).toEqual([
      [1, 'not a JSON object (a string)'],
      [2, 'not a JSON object (a number)'],
      [3, 'not a JSON object (null)'],
      [4, 'no text field (tried contents, text, body)'],
    ]);
    expect((await readOne('bad/scalar.json')).skips).toEqual([{ path: 'bad/scalar.json', reason: 'not a JSON object (a string)' }]);
    expect((await readOne('bad/empty-array.json')).skips).toEqual([{ path: 'bad/empty-array.json', reason: 'empty array' }]);
    expect((await readOne('bad/two-docs.json')).skips[0]!.reason).toMatch(/^invalid JSON: .*name the file \.jsonl\)$/);
  });

  it('empty files (also whitespace-only JSON and blank-line JSONL) are skipped as empty', async () => {
    for (const f of ['bad/empty.txt', 'bad/empty.json', 'bad/blank-lines.jsonl']) expect((await readOne(f)).items).toEqual([{ kind: 'skip', skip: { path: f, reason: 'empty file' } }]);
    const dir = join(work, 'empty-gz');
    mkdirSync(dir);
    writeFileSync(join(dir, 'e.txt.gz'), gzipSync(Buffer.alloc(0)));
    expect((await collect(readCorpusFile(dir, 'e.txt.gz'))).skips).toEqual([{ path: 'e.txt.gz', reason: 'empty file' }]);
  });

  it('binary files (a NUL byte in the first 8 KiB) are skipped', async () => {
    expect((await readOne('bad/binary.txt')).items).toEqual([{ kind: 'skip', skip: { path: 'bad/binary.txt', reason: 'binary file' } }]);
    expect((await readOne('bad/binary.html')).skips[0]!.reason).toBe('binary file');
  });

  it('invalid UTF-8: the document is skipped with the file, line and reason; clean files are not', async () => {
    const txt = await readOne('bad/invalid-utf8.txt');
    expect(txt.docs).toEqual([]);
    expect(txt.skips).toEqual([{ path: 'bad/invalid-utf8.txt', reason: 'invalid UTF-8 (3 byte sequences that do not decode)' }]);
    const line = await readOne('bad/latin1.jsonl');
    expect(line.skips).toEqual([{ path: 'bad/latin1.jsonl', line: 1, reason: 'invalid UTF-8 (1 byte sequence that does not decode)' }]);
    expect((await readOne('formats/notes.txt')).docs[0]!.warning).toBeUndefined();
  });

  it('a truncated gzip keeps the documents read before the damage; a non-gzip .gz is skipped', async () => {
    const { docs, skips } = await readOne('bad/truncated.jsonl.gz');
    expect(docs.length).toBeGreaterThan(10);
    expect(docs.map((d) => d.externalId)).toEqual(docs.map((_, i) => `t${i}`));
    expect(skips).toHaveLength(1);
    expect(skips[0]!.line).toBe(docs.length + 1);
    expect(skips[0]!.reason).toBe('truncated gzip (unexpected end of file); the rest of the file is skipped');
    expect((await readOne('bad/not-gzip.txt.gz')).skips).toEqual([{ path: 'bad/not-gzip.txt.gz', reason: 'corrupt gzip (incorrect header check)' }]);
  });

  it('bytes after a small gzip file\'s last member, or a corrupt member after intact ones, keep the documents of the intact members', async () => {
    const dir = join(work, 'gzip-damage');
    mkdirSync(dir);
    const lines = Array.from({ length: 300 }, (_, i) => JSON.stringify({ id: `g${i}`, text: `line ${i} ` + 'x'.repeat(i % 40) }) + '\n');
    const first = gzipSync(lines.slice(0, 200).join(''));
    const second = gzipSync(lines.slice(200).join(''));
    const corrupt = Buffer.from(gzipSync('{"id":"lost","text":"a member whose bytes are damaged"}\n' + lines.slice(200).join('')));
    corrupt.fill(0x55, 20, 40);
    writeFileSync(join(dir, 'junk.jsonl.gz'), Buffer.concat([first, second, Buffer.from('trailing junk, no gzip member')]));
    writeFileSync(join(dir, 'corrupt.jsonl.gz'), Buffer.concat([first, corrupt]));
    writeFileSync(join(dir, 'junk.json.gz'), Buffer.concat([gzipSync(`[${lines.map((l) => l.trim()).join(',')}]`), Buffer.from('junk')]));
    const ids = (n: number) => Array.from({ length: n }, (_, i) => `g${i}`);
    const junk = await collect(readCorpusFile(dir, 'junk.jsonl.gz'));
    expect(junk.docs.map((d) => d.externalId)).toEqual(ids(300));
    expect(junk.skips).toEqual([{ path: 'junk.jsonl.gz', line: 301, reason: 'corrupt gzip (incorrect header check); the rest of the file is skipped' }]);
    const bad = await collect(readCorpusFile(dir, 'corrupt.jsonl.gz'));
    expect(bad.docs.map((d) => d.externalId)).toEqual(ids(200));
    expect(bad.skips).toHaveLength(1);
    expect(bad.skips[0]).toMatchObject({ path: 'corrupt.jsonl.gz', line: 201, reason: expect.stringMatching(/^corrupt gzip .*; the rest of the file is skipped$/) });
    const array = await collect(readCorpusFile(dir, 'junk.json.gz'));
    expect(array.docs.map((d) => d.externalId)).toEqual(ids(300));
    expect(array.skips).toHaveLength(1);
  });

  it('lists any tree of folders depth first, each folder\'s names in code unit order, as a naive walk does (subfolders listed ahead)', async () => {
    const naive = (dir: string, rel: string): string[] =>
      readdirSync(dir, { withFileTypes: true })
        .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
        .flatMap((e) => (e.isDirectory() ? naive(join(dir, e.name), rel + e.name + '/') : [rel + e.name]));
    type Tree = { [name: string]: Tree | null };
    const name = fc.stringMatching(/^[aBz0é_-]{1,4}$/);
    const tree: fc.Arbitrary<Tree> = fc.letrec<{ t: Tree }>((tie) => ({
      t: fc.dictionary(name, fc.oneof({ depthSize: 'small', withCrossShrink: true }, fc.constant(null), tie('t')), { maxKeys: 5 }),
    })).t;
    let k = 0;
    await fc.assert(
      fc.asyncProperty(tree, async (t) => {
        const root = join(work, `tree-${k++}`);
        const make = (dir: string, node: Tree): void => {
          mkdirSync(dir, { recursive: true });
          for (const [n, child] of Object.entries(node)) {
            if (child === null) writeFileSync(join(dir, `${n}.txt`), 'words');
            else make(join(dir, n), child);
          }
        };
        make(root, t);
        try {
          expect((await listCorpusFiles(root)).files).toEqual(naive(root, ''));
        } finally {
          rmSync(root, { recursive: true, force: true });
        }
      }),
      { numRuns: 60 },
    );
  });

  it('unsupported extensions are listed apart from bad input by the walk, and skipped by readCorpusFile', async () => {
    const { skipped, unsupported } = await listCorpusFiles(join(fixtures, 'bad'));
    expect(skipped).toEqual([]);
    expect(unsupported).toEqual(['image.png', 'noext']);
    expect((await readOne('bad/image.png')).skips).toEqual([{ path: 'bad/image.png', reason: 'unsupported file type' }]);
  });

  it('counts files of unsupported types per extension, most first, no extension last among equals', () => {
    expect(['a.PNG', 'x/b.png', 'Makefile', 'c.js', 'd.svg.gz', 'e.gz', '.buildinfo', 'x.y/README', 'f.css', 'g.js', 'h.png'].map(extensionOf)).toEqual([
      '.png', '.png', '(none)', '.js', '.svg.gz', '.gz', '.buildinfo', '(none)', '.css', '.js', '.png',
    ]);
    const paths = ['s/1.png', 's/a.js', 'Makefile', 's/2.png', 's/x.css', 's/b.js', 's/3.png', 'LICENSE', 'COPYING'];
    const u = unsupportedFiles(paths);
    expect(u).toEqual({ count: 9, byExtension: { '.png': 3, '(none)': 3, '.js': 2, '.css': 1 }, items: paths });
    // a naive count per extension gives the same numbers
    const naive: Record<string, number> = {};
    for (const p of paths) {
      const name = p.split('/').pop()!;
      const ext = name.includes('.') ? name.slice(name.lastIndexOf('.')) : '(none)';
      naive[ext] = (naive[ext] ?? 0) + 1;
    }
    expect({ ...u.byExtension }).toEqual(naive);
    expect(Object.keys(u.byExtension)).toEqual(['.png', '(none)', '.js', '.css']);
    expect(describeUnsupported(u)).toBe('skipped 9 files of unsupported types: 3 .png, 3 (none), 2 .js, 1 .css');
    expect(describeUnsupported(unsupportedFiles(['a/b/c.png']))).toBe('skipped 1 file of an unsupported type: 1 .png');
    expect(describeUnsupported(unsupportedFiles(['x.js', 'y.css', 'Makefile']))).toBe('skipped 3 files of unsupported types: 1 .css, 1 .js, 1 (none)');
  });

  it('a file deleted after the walk, a folder where a file was, a FIFO: skip items, no exception', async () => {
    const dir = join(work, 'vanish');
    mkdirSync(dir);
    writeFileSync(join(dir, 'a.txt'), 'a');
    writeFileSync(join(dir, 'b.txt'), 'b');
    let fifo = false;
    try {
      execFileSync('mkfifo', [join(dir, 'pipe.txt')]);
      fifo = true;
    } catch {
      // no mkfifo here
    }
    const listing = await listCorpusFiles(dir);
    expect(listing.files).toEqual(['a.txt', 'b.txt']);
    if (fifo) expect(listing.skipped).toEqual([{ path: 'pipe.txt', reason: 'not a regular file' }]);
    unlinkSync(join(dir, 'b.txt'));
    mkdirSync(join(dir, 'c.txt'));
    const items = [];
    for (const f of listing.files) items.push(...(await collect(readCorpusFile(listing.base, f))).items);
    expect(items).toEqual([
      { kind: 'doc', doc: { externalId: 'a.txt', path: 'a.txt', title: '', text: 'a', bytes: 1 } },
      { kind: 'skip', skip: { path: 'b.txt', reason: 'cannot read (ENOENT: no such file or directory)' } },
    ]);
    expect((await collect(readCorpusFile(dir, 'c.txt'))).skips).toEqual([{ path: 'c.txt', reason: 'not a regular file' }]);
    if (fifo) expect((await collect(readCorpusFile(dir, 'pipe.txt'))).skips).toEqual([{ path: 'pipe.txt', reason: 'not a regular file' }]);
  });

  it.skipIf(process.getuid?.() === 0)('unreadable files and folders (EACCES) are skip items', async () => {
    const dir = join(work, 'eacces');
    mkdirSync(join(dir, 'locked'), { recursive: true });
    writeFileSync(join(dir, 'locked', 'x.txt'), 'x');
    writeFileSync(join(dir, 'secret.txt'), 'secret');
    chmodSync(join(dir, 'secret.txt'), 0o000);
    chmodSync(join(dir, 'locked'), 0o000);
    try {
      const { docs, skips } = await collect(readCorpus(dir));
      expect(docs).toEqual([]);
      expect(skips).toEqual([
        { path: 'locked', reason: 'cannot read folder (EACCES)' },
        { path: 'secret.txt', reason: 'cannot read (EACCES: permission denied)' },
      ]);
    } finally {
      chmodSync(join(dir, 'locked'), 0o755);
    }
  });

  it('reads the whole fixture crawl without throwing, every item naming its file', async () => {
    const { docs, skips } = await collect(readCorpus(fixtures));
    expect(docs.length).toBeGreaterThan(50);
    expect(skips.length).toBeGreaterThan(10);
    for (const s of skips) {
      expect(s.path).not.toMatch(/^\/|\\/);
      expect(s.reason.includes('\n')).toBe(false);
    }
  });
});

describe('walk', () => {
  it('is deterministic: names by UTF-16 code units, folders depth-first', async () => {
    const { base, files, skipped } = await listCorpusFiles(join(fixtures, 'order'));
    expect(base).toBe(join(fixtures, 'order'));
    expect(skipped).toEqual([]);
    expect(files).toEqual(['10.txt', '9.txt', 'B/z.txt', 'Z.txt', '_.txt', 'a/B.txt', 'a/c.txt', 'a-b/x.txt', 'a.txt', 'b.txt', 'é/e.txt']);
    const docs = (await collect(readCorpus(join(fixtures, 'order')))).docs;
    expect(docs.map((d) => d.path)).toEqual(files);
    // the same order whatever the order the files were created in
    const copy = join(work, 'order-copy');
    for (const f of [...files].reverse()) cpSync(join(fixtures, 'order', f), join(copy, f));
    expect((await listCorpusFiles(copy)).files).toEqual(files);
  });

  it('interleaves skipped files with documents in crawl order', async () => {
    const paths = (await collect(readCorpus(join(fixtures, 'bad')))).items.map((i) => (i.kind === 'doc' ? i.doc.path : i.skip.path));
    const firsts = paths.filter((p, i) => paths.indexOf(p) === i);
    expect(firsts).toEqual([...firsts].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
  });

  it('accepts a single file as the crawl (paths relative to its folder)', async () => {
    const file = join(fixtures, 'formats', 'docs.ndjson');
    expect(await listCorpusFiles(file)).toEqual({ base: join(fixtures, 'formats'), files: ['docs.ndjson'], skipped: [], unsupported: [] });
    const { docs } = await collect(readCorpus(file));
    expect(docs.map((d) => [d.path, d.externalId])).toEqual([
      ['docs.ndjson', 'n1'],
      ['docs.ndjson', 'n2'],
    ]);
    // readCorpusFile with the file itself as root works too
    expect((await collect(readCorpusFile(file, 'docs.ndjson'))).docs).toHaveLength(2);
  });

  it('fails with one clear line (CorpusError, a UserError) for a missing root or an unusable one', async () => {
    const missing = join(work, 'nope');
    await expect(listCorpusFiles(missing)).rejects.toThrow(new CorpusError(`crawl not found: ${missing}`));
    await expect(collect(readCorpus(missing))).rejects.toBeInstanceOf(UserError);
    const png = join(fixtures, 'bad', 'image.png');
    await expect(listCorpusFiles(png)).rejects.toThrow(/^not a supported crawl file: .*image\.png \(supported: \.jsonl, \.ndjson, .*\)$/);
    let fifo = true;
    try {
      execFileSync('mkfifo', [join(work, 'root-fifo')]);
    } catch {
      fifo = false; // no mkfifo here
    }
    if (fifo) await expect(listCorpusFiles(join(work, 'root-fifo'))).rejects.toThrow(`crawl is not a folder or a regular file: ${join(work, 'root-fifo')}`);
  });

  it('symbolic links: never out of the crawl, never the same file twice, no loops', async () => {
    const outside = join(work, 'outside');
    mkdirSync(outside);
    writeFileSync(join(outside, 'secret.txt'), 'outside the crawl');
    const root = join(work, 'links');
    mkdirSync(join(root, 'docs', 'sub'), { recursive: true });
    writeFileSync(join(root, 'docs', 'a.txt'), 'real a');
    writeFileSync(join(root, 'docs', 'sub', 'b.txt'), 'real b');
    writeFileSync(join(root, 'docs', 'data.bin'), 'not indexed by its own name');
    symlinkSync(join(outside, 'secret.txt'), join(root, 'escape.txt'));
    symlinkSync(outside, join(root, 'escape-dir'));
    symlinkSync('../../outside/secret.txt', join(root, 'docs', 'relative-escape.txt'));
    symlinkSync(join(root, 'docs', 'a.txt'), join(root, 'alias.txt'));
    symlinkSync('..', join(root, 'docs', 'sub', 'loop'));
    symlinkSync(root, join(root, 'docs', 'root-loop'));
    symlinkSync('docs/data.bin', join(root, 'named.txt'));
    symlinkSync('docs/data.bin', join(root, 'named2.txt'));
    symlinkSync('nowhere.txt', join(root, 'broken.txt'));
    const { files, skipped, unsupported } = await listCorpusFiles(root);
    expect(files).toEqual(['docs/a.txt', 'docs/sub/b.txt', 'named.txt']);
    expect(unsupported).toEqual(['docs/data.bin']);
    expect(skipped).toEqual([
      { path: 'alias.txt', reason: 'symbolic link to docs/a.txt, indexed at its own path' },
      { path: 'broken.txt', reason: 'broken symbolic link' },
      { path: 'docs/relative-escape.txt', reason: 'symbolic link points outside the crawl' },
      { path: 'docs/root-loop', reason: 'symbolic link to the crawl root (not followed)' },
      { path: 'docs/sub/loop', reason: 'symbolic link to the folder docs, walked at its own path' },
      { path: 'escape-dir', reason: 'symbolic link points outside the crawl' },
      { path: 'escape.txt', reason: 'symbolic link points outside the crawl' },
      { path: 'named2.txt', reason: 'symbolic link to docs/data.bin, already indexed as named.txt' },
    ]);
    const { docs } = await collect(readCorpus(root));
    expect(docs.map((d) => [d.path, d.text])).toEqual([
      ['docs/a.txt', 'real a'],
      ['docs/sub/b.txt', 'real b'],
      ['named.txt', 'not indexed by its own name'],
    ]);
    // a crawl root given through a link is fine
    const viaLink = join(work, 'links-via-link');
    symlinkSync(root, viaLink);
    expect((await listCorpusFiles(viaLink)).files).toEqual(files);
  });
});
