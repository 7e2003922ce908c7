import { spawnSync } from 'node:child_process';
import { appendFileSync, mkdirSync, mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createTokenizer } from '../indexer/analysis/tokenizer.js';
import { snippet } from '../src/snippets.js';

const cli = new URL('../dist/src/cli.js', import.meta.url).pathname;
const work = mkdtempSync(join(tmpdir(), 'gpuindex-snippets-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function gpuindex(...args: string[]) {
  const r = spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8', env: { ...process.env, GPUINDEX_DEBUG: '' } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const tokenizer = createTokenizer();
const analyze = (text: string) => {
  const out: string[] = [];
  tokenizer.tokenize(text, (t) => out.push(t));
  return out;
};

describe('snippet', () => {
  it('is the first window of words with the most query terms, those words marked', () => {
    const words = Array.from({ length: 200 }, (_, i) => (i % 37 === 5 ? 'Whales,' : i % 11 === 0 ? 'harpoons' : `word${i}`));
    const text = words.join(' \n ');
    const query = new Set(analyze('whale harpoon'));
    const s = snippet({ analyze }, text, query, { words: 30 })!;
    // Naive: count the hits of every window of 30 words, take the first best.
    const hits = words.map((w) => analyze(w).some((t) => query.has(t)));
    let best = 0;
    for (let start = 1; start + 30 <= words.length; start++) {
      const count = (s: number) => hits.slice(s, s + 30).filter(Boolean).length;
      if (count(start) > count(best)) best = start;
    }
    const expected = words.slice(best, best + 30).map((w) => (w === 'Whales,' ? '**Whales**,' : w === 'harpoons' ? '**harpoons**' : w));
    expect(s).toBe(`${best > 0 ? '… ' : ''}${expected.join(' ')}${best + 30 < words.length ? ' …' : ''}`);
  });

  it('gives a short text whole, and nothing for an empty one', () => {
    expect(snippet({ analyze }, 'The white whale.', new Set(analyze('whale')), { mark: (w) => `<${w}>` })).toBe('The white <whale>.');
    expect(snippet({ analyze }, '  \n ', new Set(['whale']))).toBeNull();
  });
});

describe('gpuindex search: title and snippet from the crawl', () => {
  const crawl = join(work, 'crawl');
  const index = join(work, 'index');
  mkdirSync(crawl);
  writeFileSync(join(crawl, 'anatomy.html'), '<html><head><title>Whale Anatomy</title></head><body><p>The skeleton of the sperm whale, measured with a harpoon for scale.</p></body></html>');
  writeFileSync(join(crawl, 'notes.md'), '# Harpoon notes\n\nA harpoon is thrown from the bow; the line runs out fast.\n');
  writeFileSync(join(crawl, 'log.jsonl'), [JSON.stringify({ id: 'log-1', title: 'First day', text: 'No harpoon was thrown today.' }), JSON.stringify({ id: 'log-2', text: 'Calm sea, nothing seen.' })].join('\n') + '\n');
  writeFileSync(join(crawl, 'plain.txt'), 'A plain text about a harpoon and nothing else.');

  const search = (...args: string[]) => {
    const r = gpuindex('search', index, 'harpoon', ...args);
    expect(r.code).toBe(0);
    return r;
  };

  it('prints the title, where the document has one, and a snippet with the query terms marked', () => {
    expect(gpuindex('build', crawl, '-o', index, '--sorter', 'cpu', '-q').code).toBe(0);
    const hits = JSON.parse(search('--json').stdout) as { externalId: string; title: string | null; snippet: string | null }[];
    const byId = Object.fromEntries(hits.map((h) => [h.externalId, h]));
    expect(Object.keys(byId).sort()).toEqual(['anatomy.html', 'log-1', 'notes.md', 'plain.txt']);
    expect(byId['anatomy.html']).toMatchObject({ title: 'Whale Anatomy', snippet: 'The skeleton of the sperm whale, measured with a **harpoon** for scale.' });
    expect(byId['notes.md']).toMatchObject({ title: 'Harpoon notes', snippet: 'A **harpoon** is thrown from the bow; the line runs out fast.' });
    expect(byId['log-1']).toMatchObject({ title: 'First day', snippet: 'No **harpoon** was thrown today.' });
    expect(byId['plain.txt']).toMatchObject({ title: null, snippet: 'A plain text about a **harpoon** and nothing else.' });

    // The text output: the hit's line, then its title and snippet (no ANSI codes: stdout is not a TTY).
    const lines = search().stdout.split('\n');
    const at = lines.findIndex((l) => / {2}anatomy\.html$/.test(l));
    expect(lines.slice(at + 1, at + 3)).toEqual(['     Whale Anatomy', '     The skeleton of the sperm whale, measured with a **harpoon** for scale.']);
    expect(search().stdout).not.toContain('\x1b[');
  });

  it('omits them for a document whose file changed or is gone since the build', () => {
    appendFileSync(join(crawl, 'plain.txt'), ' Added later: more words.');
    unlinkSync(join(crawl, 'notes.md'));
    const hits = JSON.parse(search('--json').stdout) as { externalId: string; title: string | null; snippet: string | null }[];
    const byId = Object.fromEntries(hits.map((h) => [h.externalId, h]));
    expect(byId['plain.txt']).toMatchObject({ title: null, snippet: null });
    expect(byId['notes.md']).toMatchObject({ title: null, snippet: null });
    expect(byId['anatomy.html']!.snippet).toContain('**harpoon**');
    expect(search().stdout).not.toContain('Harpoon notes');
  });
});

describe('gpuindex search: title and snippet of a hit from a segment `gpuindex add` made of another crawl', () => {
  const first = join(work, 'first');
  const second = join(work, 'second');
  const index = join(work, 'index-added');
  mkdirSync(first);
  mkdirSync(second);
  // The same file name in both crawls: each segment's paths are relative to its own crawl.
  writeFileSync(join(first, 'docs.jsonl'), JSON.stringify({ id: 'a1', title: 'Alpha whale', text: 'the white whale swims in the sea' }) + '\n');
  writeFileSync(join(second, 'docs.jsonl'), JSON.stringify({ id: 'b1', title: 'Beta whale', text: 'another whale story with a whale' }) + '\n');

  it("reads each hit from its own segment's crawl", () => {
    expect(gpuindex('build', first, '-o', index, '--sorter', 'cpu', '-q').code).toBe(0);
    expect(gpuindex('add', index, second).code).toBe(0);
    const r = gpuindex('search', index, 'whale', '--json');
    expect(r.code).toBe(0);
    const byId = Object.fromEntries((JSON.parse(r.stdout) as { externalId: string; title: string | null; snippet: string | null }[]).map((h) => [h.externalId, h]));
    expect(byId['a1']).toMatchObject({ title: 'Alpha whale', snippet: 'the white **whale** swims in the sea' });
    expect(byId['b1']).toMatchObject({ title: 'Beta whale', snippet: 'another **whale** story with a **whale**' });
  });
});
