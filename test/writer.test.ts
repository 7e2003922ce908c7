import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { buildIndex } from '../src/build.js';
import { optimizeIndex } from '../src/optimize.js';
import { openIndex } from '../src/reader.js';
import { openWriter } from '../src/writer.js';
import { verifyIndex } from '../merge/verify.js';
import { readIndexContent } from './helpers/index-files.js';
import { readSegments } from '../merge/segments.js';
import { LiveDocuments } from './helpers/live-documents.js';

const work = mkdtempSync(join(tmpdir(), 'gpuindex-writer-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
let n = 0;
const fresh = (name: string) => join(work, `${name}-${n++}`);
const WORDS = ['whale', 'ship', 'sea', 'ahab', 'white', 'harpoon', 'deck', 'storm', 'oil', 'boat', 'crew', 'moby'];
const analysis = { stem: 'none', stopwords: 'none', sorter: 'cpu' } as const;
const docsOf = (texts: number[][], from = 0) => texts.map((t, i) => ({ id: `d${from + i}`, text: t.map((w) => WORDS[w]).join(' ') }));

describe('the writer', () => {
  it('add, refresh and commit in batches, then optimize, is the build of all the documents in order (byte-identical)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(fc.array(fc.integer({ min: 0, max: WORDS.length - 1 }), { maxLength: 10 }), { minLength: 1, maxLength: 12 }), { minLength: 1, maxLength: 4 }),
        async (batches) => {
          let from = 0;
          const all = batches.map((b) => {
            const docs = docsOf(b, from);
            from += b.length;
            return docs;
          });
          const single = fresh('single');
          await buildIndex({ input: all.flat(), output: single, ...analysis });
          const dir = fresh('live');
          const writer = await openWriter(dir, { ...analysis, refreshMs: 0, mergePolicy: { factor: 2, floorDocuments: 3 } });
          for (const [i, docs] of all.entries()) {
            await writer.add(docs);
            if (i % 2 === 0) await writer.commit();
            else await writer.refresh();
          }
          // Before optimize: the writer's reader answers as the single build.
          const a = openIndex(single);
          const b = writer.reader();
          try {
            for (const q of ['whale', 'white whale ship', 'storm oil crew']) expect(b.search(q, { k: 20 })).toEqual(a.search(q, { k: 20 }));
            expect(b.stats()).toEqual(a.stats());
          } finally {
            a.close();
            b.close();
          }
          await writer.close();
          verifyIndex(dir);
          optimizeIndex(dir);
          expect(readIndexContent(dir)).toEqual(readIndexContent(single));
        },
      ),
      { numRuns: 10, seed: 17 },
    );
  });

  it('takes a built index as its first segment', async () => {
    const a = docsOf([[0, 1], [2, 3, 4], [5]]);
    const b = docsOf([[1, 6], [7, 0, 0]], 3);
    const single = fresh('single');
    await buildIndex({ input: [...a, ...b], output: single, ...analysis });
    const dir = fresh('built');
    await buildIndex({ input: a, output: dir, ...analysis });
    const writer = await openWriter(dir, { refreshMs: 0 });
    await writer.add(b);
    await writer.close();
    verifyIndex(dir);
    optimizeIndex(dir);
    expect(readIndexContent(dir)).toEqual(readIndexContent(single));
  });

  it('refuses a second writer, naming the first, and an id the index holds already; commits are what other readers see', async () => {
    const dir = fresh('lock');
    const writer = await openWriter(dir, { ...analysis, refreshMs: 0 });
    await expect(openWriter(dir)).rejects.toThrow(`${dir} has a writer already: process ${process.pid}`);
    await writer.add(docsOf([[0], [1]]));
    await expect(writer.add(docsOf([[2]], 1))).rejects.toThrow('add: a document with id "d1" is in the index already (replace() replaces it)');
    await expect(writer.add([{ id: 'x', text: 'a' }, { id: 'x', text: 'b' }])).rejects.toThrow('document id "x" is given twice');
    await writer.refresh();
    const before = openIndex(dir);
    expect(before.stats().documents).toBe(0);
    before.close();
    await writer.commit();
    const after = openIndex(dir);
    expect([...after.documents()].map((d) => d.externalId)).toEqual(['d0', 'd1']);
    after.close();
    await writer.close();
    const again = await openWriter(dir, { refreshMs: 0 });
    await again.close();
  });

  it('keeps every acknowledged add through kill -9 (in adds, flushes, commits and merges), and replays it on reopen', async () => {
    const child = join(work, 'child.mjs');
    writeFileSync(
      child,
      `import { openWriter } from ${JSON.stringify(new URL('../dist/src/index.js', import.meta.url).href)};
// Merges after every commit (factor 2 from one document), so kills land in flushes and merges too.
const w = await openWriter(process.argv[2], { stem: 'none', stopwords: 'none', sorter: 'cpu', refreshMs: 0, mergePolicy: { factor: 2, floorDocuments: 1 } });
for (let i = 0; ; i++) {
  await w.add([{ id: 'd' + i, text: 'whale ship ' + i }]);
  process.stdout.write('ack ' + i + '\\n');
  if (i % 7 === 3) await w.refresh();
  if (i % 11 === 5) await w.commit();
}
`,
    );
    for (const killAfter of [1, 6, 9, 17, 23, 34]) {
      const dir = fresh('crash');
      const acked = await new Promise<number>((done) => {
        const p = spawn(process.execPath, [child, dir], { stdio: ['ignore', 'pipe', 'inherit'] });
        let last = -1;
        let text = '';
        p.stdout.on('data', (chunk: Buffer) => {
          text += chunk.toString();
          for (const m of text.matchAll(/ack (\d+)\n/g)) last = Math.max(last, Number(m[1]));
          if (last + 1 >= killAfter) p.kill('SIGKILL');
        });
        p.on('exit', () => done(last + 1));
      });
      // Reopened, the log is replayed; closing commits it.
      const writer = await openWriter(dir, { refreshMs: 0 });
      await writer.close();
      const reader = openIndex(dir);
      const ids = [...reader.documents()].map((d) => d.externalId);
      reader.close();
      // Every acknowledged add, in order; at most the one in flight beside them.
      expect(ids.slice(0, acked)).toEqual(Array.from({ length: acked }, (_, i) => `d${i}`));
      expect(ids.length === acked || (ids.length === acked + 1 && ids[acked] === `d${acked}`)).toBe(true);
      verifyIndex(dir);
    }
  });
});

describe('closing the writer', () => {
  it('twice at once is one close: both resolve, the index is released, and what was added is committed', async () => {
    const dir = fresh('close-twice');
    const writer = await openWriter(dir, { ...analysis, refreshMs: 0 });
    await writer.add([{ id: 'a', text: 'whale' }]);
    await Promise.all([writer.close(), writer.close()]);
    // Called during or after close, an operation is refused, as a rejection (not a throw).
    await expect(writer.commit()).rejects.toThrow('the writer is closed');
    await expect(writer.delete(['a'])).rejects.toThrow('the writer is closed');
    const again = await openWriter(dir, { refreshMs: 0 });
    await again.close();
    const reader = openIndex(dir);
    expect([...reader.documents()].map((d) => d.externalId)).toEqual(['a']);
    reader.close();
  });
});

describe('an id with a lone surrogate', () => {
  it('is refused: a segment stores ids as UTF-8, so reopened, a delete or replace of it would miss the document', async () => {
    const dir = fresh('surrogate');
    const writer = await openWriter(dir, { ...analysis, refreshMs: 0 });
    await expect(writer.add([{ id: 'ok', text: 'whale' }, { id: 'a\uD800', text: 'ship' }])).rejects.toThrow('lone surrogate');
    await expect(writer.replace([{ id: '\uDC00', text: 'ship' }])).rejects.toThrow('lone surrogate');
    await writer.add([{ id: 'ok 😀', text: 'whale' }]);
    await writer.close();
    const again = await openWriter(dir, { refreshMs: 0 });
    expect(await again.delete(['ok 😀'])).toEqual({ deleted: 1 });
    await again.close();
  });
});

describe('gpuindex add', () => {
  it('adds a crawl as a committed segment, creating the index, and refuses while another writer holds it', async () => {
    const { execFileSync, spawnSync } = await import('node:child_process');
    const { mkdirSync } = await import('node:fs');
    const cli = new URL('../dist/src/cli.js', import.meta.url).pathname;
    const crawl = fresh('crawl');
    mkdirSync(crawl);
    writeFileSync(join(crawl, 'a.jsonl'), docsOf([[0, 1], [2]]).map((d) => JSON.stringify(d)).join('\n') + '\n');
    const dir = fresh('added');
    expect(execFileSync(process.execPath, [cli, 'add', dir, crawl], { encoding: 'utf8' })).toBe(`added 2 documents to ${dir} (generation 1)\n`);
    const reader = openIndex(dir);
    expect([...reader.documents()].map((d) => d.externalId)).toEqual(['d0', 'd1']);
    reader.close();
    const writer = await openWriter(dir, { refreshMs: 0 });
    const r = spawnSync(process.execPath, [cli, 'add', dir, crawl], { encoding: 'utf8' });
    expect(r.status).toBe(1);
    expect(r.stderr).toBe(`gpuindex: ${dir} has a writer already: process ${process.pid} on ${(await import('node:os')).hostname()} (write.lock)\n`);
    await writer.close();
  });
});

describe('flushes built while operations are logged', () => {
  it('write the segment a build of the same documents writes, byte for byte, a second block included, and keep documents deleted before the flush out of search', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(fc.array(fc.integer({ min: 0, max: WORDS.length - 1 }), { minLength: 150, maxLength: 300 }), { minLength: 5, maxLength: 20 }), { minLength: 1, maxLength: 6 }),
        fc.array(fc.nat(), { maxLength: 4 }),
        async (batches, deletePicks) => {
          // flushBytes gives blocks of 16,384 pairs: a buffer of more than that many tokens takes two.
          const dir = fresh('feed');
          // A flush that had to fall back on a build of its buffer says so: none may.
          const warnings: string[] = [];
          const writer = await openWriter(dir, { ...analysis, refreshMs: 0, mergePolicy: false, flushBytes: 80_000, onWarning: (m) => warnings.push(m) });
          const all: { id: string; text: string }[] = [];
          let from = 0;
          for (const b of batches) {
            const docs = docsOf(b, from);
            from += docs.length;
            all.push(...docs);
            await writer.add(docs);
          }
          // Deleted while still buffered (the last batch always is: it was logged after any flush).
          const last = all.slice(all.length - batches[batches.length - 1]!.length);
          const gone = [...new Set(deletePicks.map((p) => last[p % last.length]!.id))];
          await writer.delete(gone);
          await writer.refresh();
          const segments = writer.segmentList();
          expect(segments.reduce((a, s) => a + s.documents, 0)).toBe(all.length);
          expect(segments.reduce((a, s) => a + s.deleted, 0)).toBe(gone.length);
          // Each segment is the build of its documents, in order.
          let at = 0;
          for (const s of segments) {
            const single = fresh('feed-single');
            await buildIndex({ input: all.slice(at, at + s.documents), output: single, ...analysis });
            at += s.documents;
            expect(readIndexContent(join(dir, s.name))).toEqual(readIndexContent(single));
          }
          const r = writer.reader();
          try {
            expect([...r.documents()].map((d) => d.externalId)).toEqual(all.filter((d) => !gone.includes(d.id)).map((d) => d.id));
            for (const w of ['whale', 'moby']) {
              const hits = r.search(w, { k: 10_000 }).map((h) => h.externalId).sort();
              expect(hits).toEqual(all.filter((d) => !gone.includes(d.id) && d.text.split(' ').includes(w)).map((d) => d.id).sort());
            }
          } finally {
            r.close();
          }
          await writer.close();
          expect(warnings).toEqual([]);
          verifyIndex(dir);
        },
      ),
      { numRuns: 12, seed: 23 },
    );
  }, 300_000);
});

describe('deletes and replaces', () => {
  const opArb = fc.oneof(
    fc.record({ op: fc.constant('add' as const), docs: fc.array(fc.array(fc.integer({ min: 0, max: WORDS.length - 1 }), { maxLength: 8 }), { minLength: 1, maxLength: 6 }) }),
    fc.record({ op: fc.constant('delete' as const), picks: fc.array(fc.nat(), { minLength: 1, maxLength: 3 }) }),
    fc.record({ op: fc.constant('replace' as const), pick: fc.nat(), doc: fc.array(fc.integer({ min: 0, max: WORDS.length - 1 }), { maxLength: 8 }) }),
    fc.record({ op: fc.constantFrom('refresh' as const, 'commit' as const) }),
  );

  it('the live index holds the survivors in arrival order, and optimized it answers as a build of them', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 10 }), async (ops) => {
        const dir = fresh('del');
        // Merges after commits too: neighbours of 2 documents or more, 2 at a time.
        const writer = await openWriter(dir, { ...analysis, refreshMs: 0, mergePolicy: { factor: 2, floorDocuments: 2, maxDeletedShare: 0.3 } });
        // The reference: the live documents in arrival order (a replaced one moves to the end).
        const reference = new LiveDocuments<{ id: string; text: string }>();
        let next = 0;
        for (const o of ops) {
          if (o.op === 'add') {
            const docs = docsOf(o.docs, next);
            next += docs.length;
            await reference.add(writer, docs);
          } else if (o.op === 'delete') await reference.delete(writer, o.picks, ['no-such-id']);
          else if (o.op === 'replace') await reference.replace(writer, o.pick, (id) => ({ id, text: o.doc.map((w) => WORDS[w]).join(' ') }));
          else if (o.op === 'refresh') await writer.refresh();
          else if (o.op === 'commit') await writer.commit();
        }
        const live = reference.docs;
        await writer.refresh();
        const r = writer.reader();
        expect([...r.documents()].map((d) => d.externalId)).toEqual(live.map((d) => d.id));
        expect(r.stats().documents).toBe(live.length);
        // Search over the live, unmerged index finds every live document with the term, and no other.
        for (const w of ['whale', 'sea', 'moby']) {
          const hits = r.search(w, { k: 1000 }).map((h) => h.externalId).sort();
          expect(hits).toEqual(live.filter((d) => d.text.split(' ').includes(w)).map((d) => d.id).sort());
        }
        r.close();
        await writer.close();
        verifyIndex(dir);
        optimizeIndex(dir);
        verifyIndex(dir);
        const single = fresh('survivors');
        await buildIndex({ input: live, output: single, ...analysis });
        const a = openIndex(single);
        const b = openIndex(dir);
        try {
          expect([...b.documents()]).toEqual([...a.documents()]);
          for (const q of ['whale', 'white whale ship', 'storm oil crew moby']) expect(b.search(q, { k: 50 })).toEqual(a.search(q, { k: 50 }));
          const terms = (x: typeof a) => [...x.lexicon()].map((e) => [e.term, e.df, e.cf, [...x.postingsOf(e.term).docIds]]);
          expect(terms(b)).toEqual(terms(a));
        } finally {
          a.close();
          b.close();
        }
      }),
      { numRuns: 25, seed: 99 },
    );
  });
});

describe('an id a built index holds more than once', () => {
  it('is deleted and replaced in every one of its documents', async () => {
    const dir = fresh('repeats');
    // A crawl may repeat an id (build keeps each document); the writer refuses repeats itself.
    const input = ['a', 'b', 'a', 'c', 'a', 'b'].map((id, i) => ({ id, text: `${WORDS[i % WORDS.length]} whale` }));
    await buildIndex({ input, output: dir, ...analysis });
    const writer = await openWriter(dir, { ...analysis, refreshMs: 0, mergePolicy: false });
    expect(await writer.delete(['a'])).toEqual({ deleted: 3 });
    expect(await writer.replace([{ id: 'b', text: 'sea storm' }])).toEqual({ added: 1 });
    await writer.refresh();
    const r = writer.reader();
    try {
      expect([...r.documents()].map((d) => d.externalId)).toEqual(['c', 'b']);
      expect(r.search('whale', { k: 10 }).map((h) => h.externalId)).toEqual(['c']);
      expect(r.search('sea', { k: 10 }).map((h) => h.externalId)).toEqual(['b']);
    } finally {
      r.close();
    }
    await writer.close();
    verifyIndex(dir);
  });
});

describe('a writer on a folder that is not an index', () => {
  it('makes one in a new or empty folder, and refuses a folder holding anything else, touching nothing', async () => {
    const empty = fresh('empty');
    mkdirSync(empty);
    const w = await openWriter(empty, { ...analysis, refreshMs: 0 });
    await w.add(docsOf([[0]]));
    await w.close();
    expect(openIndex(empty).stats().documents).toBe(1);
    const mine = fresh('mine');
    mkdirSync(join(mine, 'seg-0003'), { recursive: true });
    writeFileSync(join(mine, 'seg-0003', 'precious.txt'), 'keep me');
    await expect(openWriter(mine, analysis)).rejects.toThrow(/not a gpuindex index and is not empty/);
    expect(readdirSync(mine)).toEqual(['seg-0003']);
    expect(readdirSync(join(mine, 'seg-0003'))).toEqual(['precious.txt']);
  });
});

describe('optimize of one segment', () => {
  it('rewrites it when it has deleted documents, and says so; leaves it otherwise', async () => {
    const dir = fresh('one-segment');
    await buildIndex({ input: docsOf([[0, 1], [2], [3, 0]]), output: dir, ...analysis });
    expect(optimizeIndex(dir)).toMatchObject({ segments: 1, rewritten: false, documents: 3 });
    const writer = await openWriter(dir, { ...analysis, refreshMs: 0, mergePolicy: false });
    await writer.delete(['d1']);
    await writer.close();
    expect(optimizeIndex(dir)).toMatchObject({ segments: 1, rewritten: true, documents: 2 });
    verifyIndex(dir);
    expect(optimizeIndex(dir)).toMatchObject({ rewritten: false, documents: 2 });
  });
});

describe('snapshot readers', () => {
  it('keep their generation while the writer commits, and reopen() gives the new one, sharing the segments both have', async () => {
    const dir = fresh('snap');
    const writer = await openWriter(dir, { ...analysis, refreshMs: 0 });
    await writer.add(docsOf([[0, 1], [2]]));
    await writer.commit();
    const first = openIndex(dir);
    expect(first.reopen()).toBe(first);
    await writer.add(docsOf([[0, 3]], 2));
    await writer.delete(['d0']);
    await writer.commit();
    // The old snapshot still answers as it did.
    expect([...first.documents()].map((d) => d.externalId)).toEqual(['d0', 'd1']);
    const second = first.reopen();
    expect(second).not.toBe(first);
    expect([...second.documents()].map((d) => d.externalId)).toEqual(['d1', 'd2']);
    expect(second.search('whale').map((h) => h.externalId)).toEqual(['d2']);
    first.close();
    // The shared segment's files stay open for the newer reader.
    expect(second.postingsOf('sea').docIds.length).toBe(1);
    second.close();
    await writer.close();
    // After optimize replaced the folder, a reopen reads the new files, not the old ones.
    const before = openIndex(dir);
    optimizeIndex(dir);
    const after = before.reopen();
    expect([...after.documents()].map((d) => [d.docId, d.externalId])).toEqual([[0, 'd1'], [1, 'd2']]);
    before.close();
    after.close();
  });

  it('reopen() after optimize sees a new writer\'s commits, though they bring the generation back to the one the reader saw', async () => {
    const dir = fresh('generation-again');
    const options = { ...analysis, refreshMs: 0, mergePolicy: false } as const;
    const before = await openWriter(dir, options);
    await before.add(docsOf([[0], [1]]));
    await before.commit();
    await before.add(docsOf([[0, 2]], 2));
    await before.close();
    const reader = openIndex(dir);
    const seen = reader.manifest!.generation;
    expect(reader.search('whale').map((h) => h.externalId)).toEqual(['d0', 'd2']);
    // optimize makes the index one segment again: the next writer numbers its commits from 0.
    optimizeIndex(dir);
    const after = await openWriter(dir, options);
    const generations: number[] = [];
    for (let i = 0; generations.at(-1) !== seen; i++) {
      await after.add([{ id: `new${i}`, text: 'storm' }]);
      await after.delete([`d${i}`]);
      generations.push((await after.commit()).generation);
    }
    await after.close();
    expect(generations).toEqual([1, 2]);
    expect(readSegments(dir)!.generation).toBe(seen);
    const reopened = reader.reopen();
    expect(reopened.search('storm').map((h) => h.externalId)).toEqual(['new0', 'new1']);
    expect(reopened.search('whale').map((h) => h.externalId)).toEqual(['d2']);
    expect(reopened).not.toBe(reader);
    expect(reopened.reopen()).toBe(reopened);
    reader.close();
    reopened.close();
  });

  it('reopen() of a segments.json written before commit ids compares generations, and sees the next commit, which has one', async () => {
    const dir = fresh('no-commit-id');
    const options = { ...analysis, refreshMs: 0, mergePolicy: false } as const;
    const writer = await openWriter(dir, options);
    await writer.add(docsOf([[0], [1]]));
    await writer.close();
    const path = join(dir, 'segments.json');
    const { commitId, ...older } = JSON.parse(readFileSync(path, 'utf8')) as { commitId: string };
    expect(commitId).toMatch(/^[0-9a-f-]{36}$/);
    writeFileSync(path, JSON.stringify(older));
    const reader = openIndex(dir);
    expect(reader.reopen()).toBe(reader);
    const next = await openWriter(dir, options);
    await next.delete(['d0']);
    await next.close();
    const reopened = reader.reopen();
    expect([...reopened.documents()].map((d) => d.externalId)).toEqual(['d1']);
    expect(reopened.manifest!.commitId).not.toBe(commitId);
    expect(reopened.reopen()).toBe(reopened);
    reader.close();
    reopened.close();
  });

  it('reopen() of a one-segment index sees it replaced by another one-segment index (optimize after a writer)', async () => {
    const dir = fresh('flat-again');
    await buildIndex({ input: docsOf([[0], [1]]), output: dir, ...analysis });
    const reader = openIndex(dir);
    expect(reader.manifest).toBeUndefined();
    expect(reader.reopen()).toBe(reader);
    const writer = await openWriter(dir, { ...analysis, refreshMs: 0, mergePolicy: false });
    await writer.add([{ id: 'new', text: 'storm' }]);
    await writer.delete(['d0']);
    await writer.close();
    optimizeIndex(dir);
    expect(readSegments(dir)).toBeUndefined();
    const reopened = reader.reopen();
    expect([...reopened.documents()].map((d) => d.externalId)).toEqual(['d1', 'new']);
    expect(reopened.search('storm').map((h) => h.externalId)).toEqual(['new']);
    expect(reopened).not.toBe(reader);
    expect(reopened.reopen()).toBe(reopened);
    reader.close();
    reopened.close();
  });

  it('CIFF export refuses an index with deleted documents until it is optimized', async () => {
    const { exportCiff } = await import('../src/ciff/ciff.js');
    const dir = fresh('ciff');
    const writer = await openWriter(dir, { ...analysis, refreshMs: 0, mergePolicy: false });
    await writer.add(docsOf([[0], [1]]));
    await writer.refresh(); // in a segment: the delete is the segment's
    await writer.delete(['d0']);
    await writer.close();
    const r = openIndex(dir);
    expect(() => exportCiff(r, join(work, 'x.ciff'), 'x')).toThrow(`${dir} has deleted documents: run \`gpuindex optimize\` on it before exporting`);
    r.close();
    optimizeIndex(dir);
    const o = openIndex(dir);
    expect(exportCiff(o, join(work, 'x.ciff'), 'x').docRecords).toBe(1);
    o.close();
  });
});

describe('merges', () => {
  it('keep the segment count bounded as commits come, and the index the build of the same documents', async () => {
    const { pickMerge } = await import('../merge/merge-policy.js');
    const dir = fresh('tiers');
    const writer = await openWriter(dir, { ...analysis, refreshMs: 0, mergePolicy: { factor: 3, floorDocuments: 2 } });
    const all = docsOf(Array.from({ length: 40 }, (_, i) => [i % WORDS.length, (i * 7) % WORDS.length]));
    let most = 0;
    for (const d of all) {
      await writer.add([d]);
      await writer.commit();
      // Merges run in the background: once they settle, the next commit names their segments.
      await writer.waitForMerges();
      await writer.commit();
      const r = openIndex(dir);
      most = Math.max(most, r.segmentList().length);
      expect(pickMerge(r.segmentList().map((g) => ({ documents: g.stats.documents, deleted: g.deleted })), { factor: 3, floorDocuments: 2, maxMergedDocuments: 1e9, maxDeletedShare: 0.2 })).toBeUndefined();
      r.close();
    }
    await writer.close();
    // Two tiers below 40 documents: at most 2 segments a tier, and the one being filled.
    expect(most).toBeLessThanOrEqual(6);
    verifyIndex(dir);
    const single = fresh('single');
    await buildIndex({ input: all, output: single, ...analysis });
    optimizeIndex(dir);
    expect(readIndexContent(dir)).toEqual(readIndexContent(single));
  });

  it('the policy merges neighbours of one tier, factor at a time, and a segment with many deletes with its smaller neighbour', async () => {
    const { pickMerge } = await import('../merge/merge-policy.js');
    const p = { factor: 3, floorDocuments: 10, maxMergedDocuments: 1000, maxDeletedShare: 0.2 };
    const seg = (documents: number, deleted = 0) => ({ documents, deleted });
    expect(pickMerge([seg(5), seg(5)], p)).toBeUndefined();
    expect(pickMerge([seg(100), seg(5), seg(5), seg(5)], p)).toEqual([1, 4]);
    expect(pickMerge([seg(100), seg(50), seg(50), seg(50), seg(5)], p)).toEqual([1, 4]);
    // Tiers are by live documents; a merge past maxMergedDocuments is not made.
    expect(pickMerge([seg(600), seg(600), seg(600)], p)).toBeUndefined();
    expect(pickMerge([seg(100), seg(10, 5), seg(40)], p)).toEqual([1, 3]);
    expect(pickMerge([seg(30), seg(10, 5), seg(40)], p)).toEqual([0, 2]);
    expect(pickMerge([seg(10, 9)], p)).toEqual([0, 1]);
  });
});
