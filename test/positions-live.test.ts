import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { buildIndex } from '../src/build.js';
import { mergeSegments } from '../merge/segment-merge.js';
import { writeDeletes } from '../merge/deletes.js';
import { verifyIndex } from '../merge/verify.js';
import { optimizeIndex } from '../src/optimize.js';
import { joinShards } from '../src/join.js';
import { openIndex, type IndexReader } from '../src/reader.js';
import { openWriter } from '../src/writer.js';
import { readIndexContent } from './helpers/index-files.js';
import { naivePositionsFile, readPositions, tokenStreams } from './helpers/positions.js';
import { readManifest, writeManifest } from '../merge/manifest.js';
import { PositionsFile } from '../merge/positions-file.js';
import { LiveDocuments } from './helpers/live-documents.js';

const work = mkdtempSync(join(tmpdir(), 'gpuindex-poslive-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
let serial = 0;

/** Few words, stopwords among them, so that terms and phrases repeat within and across documents. */
const VOCABULARY = ['white', 'whale', 'the', 'of', 'sea', 'ahab', 'and', 'whales', 'ship', 'café'];
const word = fc.constantFrom(...VOCABULARY);
const words = (min: number, max: number) => fc.array(word, { minLength: min, maxLength: max }).map((w) => w.join(' '));
const doc = fc.record({ title: fc.oneof(fc.constant(''), words(1, 4)), text: words(0, 25) });
type Doc = { title: string; text: string };
const withIds = (docs: readonly Doc[], from = 0) => docs.map((d, i) => ({ id: `d${from + i}`, ...d }));

/** What a byte-for-byte comparison of two indexes covers: the content tables, postings.bin and positions.bin. */
function contentOf(dir: string) {
  return { ...readIndexContent(dir), positions: readFileSync(join(dir, 'positions.bin')) };
}

async function build(docs: readonly { id: string; title: string; text: string }[], positions = true, blockSize?: number): Promise<string> {
  const out = join(work, `b-${serial++}`);
  await buildIndex({ input: docs, output: out, sorter: 'cpu', blockSize, ...(positions ? { positions: true } : {}) });
  return out;
}

/** A crawl cut into three non-empty parts, and which of its documents are deleted (never all). */
const cutCrawl = fc
  .array(doc, { minLength: 3, maxLength: 30 })
  .chain((docs) =>
    fc.record({
      docs: fc.constant(docs),
      cuts: fc.uniqueArray(fc.integer({ min: 1, max: docs.length - 1 }), { minLength: 2, maxLength: 2 }).map((c) => c.sort((a, b) => a - b)),
      deleted: fc.uniqueArray(fc.integer({ min: 0, max: docs.length - 1 }), { maxLength: docs.length - 1 }),
      blockSize: fc.integer({ min: 4, max: 60 }),
    }),
  );

describe('segment merge with positions', () => {
  it('merged segments (with deletes) are the build of their live documents: postings, lexicon, documents and positions.bin byte for byte', async () => {
    await fc.assert(
      fc.asyncProperty(cutCrawl, async ({ docs, cuts, deleted, blockSize }) => {
        const all = withIds(docs);
        const bounds = [0, ...cuts, docs.length];
        const segments: { dir: string; deletes?: string }[] = [];
        const gone = new Set(deleted);
        for (let s = 0; s < 3; s++) {
          const dir = await build(all.slice(bounds[s]!, bounds[s + 1]!), true, blockSize);
          const local = deleted.filter((d) => d >= bounds[s]! && d < bounds[s + 1]!).map((d) => d - bounds[s]!);
          if (local.length > 0) writeDeletes(dir, 'deletes-1.bin', local);
          segments.push({ dir, ...(local.length > 0 ? { deletes: 'deletes-1.bin' } : {}) });
        }
        const out = join(work, `m-${serial++}`);
        mkdirSync(out);
        const r = mergeSegments(segments, out, {});
        const single = await build(all.filter((_, i) => !gone.has(i)), true, blockSize);
        expect(contentOf(out)).toEqual(contentOf(single));
        expect(r.positionsBytes).toBe(readFileSync(join(out, 'positions.bin')).length);
        verifyIndex(out);
      }),
      { numRuns: 40 },
    );
  });

  it('segments without positions merge as before (no positions.bin); with and without positions are refused in one line', async () => {
    const docs = withIds([
      { title: 'white whale', text: 'the white whale of the sea' },
      { title: '', text: 'ahab and the ship' },
    ]);
    const plain = [await build(docs.slice(0, 1), false), await build(docs.slice(1), false)];
    const out = join(work, `m-${serial++}`);
    mkdirSync(out);
    expect(mergeSegments(plain.map((dir) => ({ dir })), out, {}).positionsBytes).toBeUndefined();
    expect(existsSync(join(out, 'positions.bin'))).toBe(false);
    const positioned = await build(docs.slice(1), true);
    const mixed = join(work, `m-${serial++}`);
    mkdirSync(mixed);
    expect(() => mergeSegments([{ dir: plain[0]! }, { dir: positioned }], mixed, {})).toThrow(/^segment merge: .* has positions \(--positions\), .* has none; segments with and without positions do not merge$/);
  });
});

/** Whether `phrase` (analysed terms) lies in `tokens` at consecutive places. */
function contains(tokens: readonly string[], phrase: readonly string[]): boolean {
  for (let i = 0; i + phrase.length <= tokens.length; i++) if (phrase.every((t, j) => tokens[i + j] === t)) return true;
  return false;
}

/** The ids of the documents holding the phrase (in the title for title:, else in the title or the text), by a scan of their tokens. */
function naivePhraseHits(reader: IndexReader, docs: readonly { id: string; title: string; text: string }[], phrase: string, title: boolean): string[] {
  const terms = reader.analyze(phrase);
  if (terms.length === 0) return [];
  const streams = tokenStreams(docs, {});
  return docs.filter((_, d) => contains(streams[d]!.title, terms) || (!title && contains(streams[d]!.text, terms))).map((d) => d.id).sort();
}

const phraseArb = fc.record({ text: words(2, 3), title: fc.boolean() });
const opArb = fc.oneof(
  fc.record({ op: fc.constant('add' as const), docs: fc.array(doc, { minLength: 1, maxLength: 6 }) }),
  fc.record({ op: fc.constant('delete' as const), picks: fc.array(fc.nat(), { minLength: 1, maxLength: 3 }) }),
  fc.record({ op: fc.constant('replace' as const), pick: fc.nat(), doc }),
  fc.record({ op: fc.constantFrom('refresh' as const, 'commit' as const) }),
);

describe('the writer on an index with positions', () => {
  it('build(A, --positions), then adds, deletes, replaces and merges: phrases on the live index are a token scan\'s; optimized, it is the build of the survivors byte for byte', async () => {
    // Runs in which the writer merged segments in the background (with positions) before optimize.
    let merged = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(doc, { minLength: 1, maxLength: 8 }), fc.array(opArb, { minLength: 1, maxLength: 10 }), fc.array(phraseArb, { minLength: 1, maxLength: 4 }), async (first, ops, phrases) => {
        const dir = await build(withIds(first));
        // Merges after commits too: neighbours of 2 documents or more, 2 at a time.
        const writer = await openWriter(dir, { refreshMs: 0, sorter: 'cpu', mergePolicy: { factor: 2, floorDocuments: 2, maxDeletedShare: 0.3 } });
        const reference = new LiveDocuments(withIds(first));
        let next = first.length;
        for (const o of ops) {
          if (o.op === 'add') {
            const docs = withIds(o.docs, next);
            next += docs.length;
            await reference.add(writer, docs);
          } else if (o.op === 'delete') await reference.delete(writer, o.picks);
          else if (o.op === 'replace') await reference.replace(writer, o.pick, (id) => ({ id, ...o.doc }));
          else if (o.op === 'refresh') await writer.refresh();
          else if (o.op === 'commit') await writer.commit();
        }
        const live = reference.docs;
        await writer.refresh();
        const r = writer.reader();
        try {
          expect([...r.documents()].map((d) => d.externalId)).toEqual(live.map((d) => d.id));
          for (const p of phrases) {
            const hits = r.search(`${p.title ? 'title:' : ''}"${p.text}"`, { k: 1000 }).map((h) => h.externalId).sort();
            expect(hits).toEqual(naivePhraseHits(r, live, p.text, p.title));
          }
        } finally {
          r.close();
        }
        await writer.close();
        if (writer.bytesWritten.merges > 0) merged++;
        verifyIndex(dir);
        optimizeIndex(dir);
        verifyIndex(dir);
        fc.pre(live.length > 0);
        expect(contentOf(dir)).toEqual(contentOf(await build(live)));
      }),
      { numRuns: 25 },
    );
    expect(merged).toBeGreaterThan(0);
  });

  it('inherits positions from the index, takes them for a new one, and refuses a contradicting option in one line', async () => {
    const docs = withIds([{ title: 'white whale', text: 'the white whale of the sea' }]);
    const built = await build(docs);
    await expect(openWriter(built, { positions: false })).rejects.toThrow(/^.*: the index stores positions \(built with --positions\); the writer's positions: false contradicts it$/);
    const plain = await build(docs, false);
    await expect(openWriter(plain, { positions: true })).rejects.toThrow(/^.*: the index stores no positions; the writer's positions: true contradicts it$/);
    const created = join(work, `new-${serial++}`);
    const w = await openWriter(created, { positions: true, refreshMs: 0, sorter: 'cpu' });
    await w.add([{ id: 'a', title: 'ahab', text: 'the white whale' }]);
    await w.close();
    // Reopened without the option: the index's own setting holds; a phrase is answered.
    const again = await openWriter(created, { refreshMs: 0, sorter: 'cpu' });
    await again.add([{ id: 'b', title: '', text: 'whale white' }]);
    await again.close();
    await expect(openWriter(created, { positions: false })).rejects.toThrow(/stores positions/);
    const r = openIndex(created);
    try {
      expect(r.search('"white whale"').map((h) => h.externalId)).toEqual(['a']);
      expect(r.search('title:ahab').map((h) => h.externalId)).toEqual(['a']);
    } finally {
      r.close();
    }
  });
});

describe('gpuindex add and optimize on an index built with --positions', () => {
  it('add keeps positions; optimize gives the build of both crawls byte for byte', async () => {
    const cli = new URL('../dist/src/cli.js', import.meta.url).pathname;
    const crawl = (name: string, docs: { id: string; title: string; text: string }[]) => {
      const dir = join(work, `crawl-${serial++}`);
      mkdirSync(dir);
      writeFileSync(join(dir, name), docs.map((d) => JSON.stringify(d)).join('\n') + '\n');
      return dir;
    };
    const a = withIds([{ title: 'white whale', text: 'the white whale of the sea' }, { title: '', text: 'ahab and the ship' }]);
    const b = withIds([{ title: 'the ship', text: 'white sea whale' }, { title: 'ahab', text: 'whale white whale' }], 2);
    const index = join(work, `cli-${serial++}`);
    await buildIndex({ input: crawl('a.jsonl', a), output: index, sorter: 'cpu', positions: true });
    execFileSync(process.execPath, [cli, 'add', index, crawl('b.jsonl', b)], { encoding: 'utf8' });
    const r = openIndex(index);
    try {
      expect(r.search('"white whale"', { k: 10 }).map((h) => h.externalId).sort()).toEqual(['d0', 'd3']);
      expect(r.search('title:"the ship"', { k: 10 }).map((h) => h.externalId)).toEqual(['d2']);
    } finally {
      r.close();
    }
    execFileSync(process.execPath, [cli, 'optimize', index], { encoding: 'utf8' });
    const both = join(work, `crawl-${serial++}`);
    mkdirSync(both);
    writeFileSync(join(both, 'a.jsonl'), a.map((d) => JSON.stringify(d)).join('\n') + '\n');
    writeFileSync(join(both, 'b.jsonl'), b.map((d) => JSON.stringify(d)).join('\n') + '\n');
    const single = join(work, `b-${serial++}`);
    await buildIndex({ input: both, output: single, sorter: 'cpu', positions: true });
    expect(contentOf(index)).toEqual(contentOf(single));
  });
});

describe('join of shards built with --positions', () => {
  it('joined shards answer phrases as a token scan; join + optimize is the single build byte for byte (any crawl, N = 1..4)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(doc, { minLength: 1, maxLength: 12 }), { minLength: 1, maxLength: 3 }), fc.integer({ min: 1, max: 4 }), fc.array(phraseArb, { minLength: 1, maxLength: 3 }), async (files, count, phrases) => {
        const crawl = join(work, `crawl-${serial++}`);
        mkdirSync(crawl);
        let next = 0;
        const all: { id: string; title: string; text: string }[] = [];
        files.forEach((docs, f) => {
          const withId = withIds(docs, next);
          next += docs.length;
          all.push(...withId);
          writeFileSync(join(crawl, `f${f}.jsonl`), withId.map((d) => JSON.stringify(d)).join('\n') + '\n');
        });
        const single = join(work, `b-${serial++}`);
        await buildIndex({ input: crawl, output: single, sorter: 'cpu', workers: 1, positions: true });
        const shards: string[] = [];
        for (let i = 0; i < count; i++) {
          const out = join(work, `s-${serial++}`);
          await buildIndex({ input: crawl, output: out, sorter: 'cpu', workers: 1, positions: true, shard: `${i}/${count}` });
          shards.push(out);
        }
        const joined = join(work, `j-${serial++}`);
        joinShards(joined, shards);
        expect(verifyIndex(joined).segments).toBe(count);
        const r = openIndex(joined);
        try {
          for (const p of phrases) {
            const hits = r.search(`${p.title ? 'title:' : ''}"${p.text}"`, { k: 1000 }).map((h) => h.externalId).sort();
            expect(hits).toEqual(naivePhraseHits(r, all, p.text, p.title));
          }
        } finally {
          r.close();
        }
        optimizeIndex(joined);
        verifyIndex(joined);
        expect(contentOf(joined)).toEqual(contentOf(single));
      }),
      { numRuns: 10 },
    );
  });

  it('a writer on the joined index adds with the shards\' analysis and positions', async () => {
    const crawl = join(work, `crawl-${serial++}`);
    mkdirSync(crawl);
    writeFileSync(join(crawl, 'a.jsonl'), withIds([{ title: 'Whales', text: 'the white whale' }, { title: '', text: 'sea and ships' }]).map((d) => JSON.stringify(d)).join('\n') + '\n');
    const shards = [join(work, `s-${serial++}`), join(work, `s-${serial++}`)];
    for (const [i, out] of shards.entries()) await buildIndex({ input: crawl, output: out, sorter: 'cpu', workers: 1, positions: true, stem: 'none', titleWeight: 3, shard: `${i}/2` });
    const joined = join(work, `j-${serial++}`);
    joinShards(joined, shards);
    const writer = await openWriter(joined, { refreshMs: 0, sorter: 'cpu', mergePolicy: false });
    await writer.add([{ id: 'n', title: 'ships', text: 'white whales' }]);
    await writer.close();
    const r = openIndex(joined);
    try {
      const segments = r.segmentList();
      expect(segments).toHaveLength(3);
      const settingsOf = (dir: string) => {
        const one = openIndex(dir);
        one.close();
        return one.settings;
      };
      const added = settingsOf(segments[2]!.path);
      expect(added.tokenizer).toEqual(settingsOf(shards[0]!).tokenizer);
      expect(added.positions).toBe(true);
      // Unstemmed as the shards are: "whales" is not "whale".
      expect(r.search('"white whales"').map((h) => h.externalId)).toEqual(['n']);
      expect(r.search('title:ships').map((h) => h.externalId)).toEqual(['n']);
    } finally {
      r.close();
    }
  });

  it('refuses shards built with and without --positions in one line', async () => {
    const crawl = join(work, `crawl-${serial++}`);
    mkdirSync(crawl);
    writeFileSync(join(crawl, 'a.jsonl'), withIds([{ title: 'x', text: 'white whale' }, { title: '', text: 'sea' }]).map((d) => JSON.stringify(d)).join('\n') + '\n');
    const with0 = join(work, `s-${serial++}`);
    const without1 = join(work, `s-${serial++}`);
    await buildIndex({ input: crawl, output: with0, sorter: 'cpu', positions: true, shard: '0/2' });
    await buildIndex({ input: crawl, output: without1, sorter: 'cpu', shard: '1/2' });
    expect(() => joinShards(join(work, `j-${serial++}`), [with0, without1])).toThrow(`join: ${with0} was built with --positions, ${without1} without`);
  });
});

/**
 * Rewrites `dir`'s positions.bin in format 2 (what the previous release wrote), from the
 * positions it holds, by the naive format-2 encoder; MANIFEST.json follows it.
 */
function toFormat2(dir: string): void {
  const { positions, titleLengths } = readPositions(dir);
  const termsInIdOrder = readIndexContent(dir).terms.map((row) => (row as [number, string])[1]);
  const titleWeight = formatOf(dir).titleWeight;
  writeFileSync(join(dir, 'positions.bin'), naivePositionsFile(positions, titleLengths, termsInIdOrder, titleWeight));
  const manifest = readManifest(dir);
  writeManifest(dir, Object.keys(manifest.files), manifest.formatVersion);
  expect(formatOf(dir).format).toBe(2);
}

function formatOf(dir: string): { format: number; titleWeight: number } {
  const f = new PositionsFile(join(dir, 'positions.bin'));
  f.close();
  return { format: f.format, titleWeight: f.titleWeight };
}

describe('positions.bin format 2 (written by the previous release)', () => {
  it('opens, verifies and answers phrases as a token scan; merged with format-3 segments (with deletes), it is the format-3 build of the live documents byte for byte', async () => {
    await fc.assert(
      fc.asyncProperty(cutCrawl, fc.array(fc.boolean(), { minLength: 3, maxLength: 3 }), fc.array(phraseArb, { minLength: 1, maxLength: 3 }), fc.integer({ min: 1, max: 3 }), async ({ docs, cuts, deleted, blockSize }, format2, phrases, titleWeight) => {
        const all = withIds(docs);
        const bounds = [0, ...cuts, docs.length];
        const segments: { dir: string; deletes?: string }[] = [];
        const gone = new Set(deleted);
        for (let s = 0; s < 3; s++) {
          const part = all.slice(bounds[s]!, bounds[s + 1]!);
          const dir = join(work, `f2-${serial++}`);
          await buildIndex({ input: part, output: dir, sorter: 'cpu', blockSize, titleWeight, positions: true });
          if (format2[s]) {
            toFormat2(dir);
            verifyIndex(dir);
            const r = openIndex(dir);
            try {
              for (const p of phrases) {
                const hits = r.search(`${p.title ? 'title:' : ''}"${p.text}"`, { k: 1000 }).map((h) => h.externalId).sort();
                expect(hits).toEqual(naivePhraseHits(r, part, p.text, p.title));
              }
            } finally {
              r.close();
            }
          }
          const local = deleted.filter((d) => d >= bounds[s]! && d < bounds[s + 1]!).map((d) => d - bounds[s]!);
          if (local.length > 0) writeDeletes(dir, 'deletes-1.bin', local);
          segments.push({ dir, ...(local.length > 0 ? { deletes: 'deletes-1.bin' } : {}) });
        }
        const out = join(work, `m-${serial++}`);
        mkdirSync(out);
        mergeSegments(segments, out, {});
        const single = join(work, `b-${serial++}`);
        await buildIndex({ input: all.filter((_, i) => !gone.has(i)), output: single, sorter: 'cpu', blockSize, titleWeight, positions: true });
        expect(formatOf(out).format).toBe(3);
        expect(contentOf(out)).toEqual(contentOf(single));
        verifyIndex(out);
      }),
      { numRuns: 30 },
    );
  });

  it('a writer adds format-3 segments beside a format-2 index: phrases across both are a token scan\'s; optimized, the format-3 build of both byte for byte', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(doc, { minLength: 1, maxLength: 10 }), fc.array(doc, { minLength: 1, maxLength: 10 }), fc.array(phraseArb, { minLength: 1, maxLength: 3 }), async (first, second, phrases) => {
        const a = withIds(first);
        const b = withIds(second, first.length);
        const dir = await build(a);
        toFormat2(dir);
        const writer = await openWriter(dir, { refreshMs: 0, sorter: 'cpu', mergePolicy: false });
        await writer.add(b);
        await writer.close();
        const r = openIndex(dir);
        try {
          expect(r.segmentList()).toHaveLength(2);
          for (const p of phrases) {
            const hits = r.search(`${p.title ? 'title:' : ''}"${p.text}"`, { k: 1000 }).map((h) => h.externalId).sort();
            expect(hits).toEqual(naivePhraseHits(r, [...a, ...b], p.text, p.title));
          }
        } finally {
          r.close();
        }
        verifyIndex(dir);
        optimizeIndex(dir);
        verifyIndex(dir);
        expect(formatOf(dir).format).toBe(3);
        expect(contentOf(dir)).toEqual(contentOf(await build([...a, ...b])));
      }),
      { numRuns: 15 },
    );
  });
});
