import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { buildIndex } from '../src/build.js';
import { optimizeIndex } from '../src/optimize.js';
import { openIndex, type IndexReader } from '../src/reader.js';
import { openWriter, writerMemory, type IndexWriter } from '../src/writer.js';
import { pickMergeAround } from '../merge/merge-policy.js';
import { verifyIndex } from '../merge/verify.js';
import { LiveDocuments } from './helpers/live-documents.js';

const work = mkdtempSync(join(tmpdir(), 'gpuindex-writer-merges-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
let n = 0;
const fresh = (name: string) => join(work, `${name}-${n++}`);
const WORDS = ['whale', 'ship', 'sea', 'ahab', 'white', 'harpoon', 'deck', 'storm', 'oil', 'boat', 'crew', 'moby'];
const analysis = { stem: 'none', stopwords: 'none', sorter: 'cpu' } as const;
const docsOf = (texts: number[][], from = 0) => texts.map((t, i) => ({ id: `d${from + i}`, text: t.map((w) => WORDS[w]).join(' ') }));
const idsOf = (r: IndexReader) => [...r.documents()].map((d) => d.externalId);

/** A commit's fsyncs (merge/segments.ts fsyncPath) wait while `wait` is set: a test holds a commit there. */
const fsyncHold = vi.hoisted(() => ({ wait: undefined as Promise<void> | undefined }));
vi.mock('../merge/segments.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../merge/segments.js')>();
  return {
    ...real,
    fsyncPath: async (path: string) => {
      while (fsyncHold.wait) await fsyncHold.wait;
      return real.fsyncPath(path);
    },
  };
});

/** Holds every merge, once written, until release(). */
function mergeGate() {
  let release!: () => void;
  const open = new Promise<void>((r) => (release = r));
  return { onMergeWritten: () => open, release };
}

/** The survivors, optimized, answer as a build of them: documents, postings and scores. */
async function expectSurvivors(dir: string, live: { id: string; text: string }[]): Promise<void> {
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
    const terms = (x: IndexReader) => [...x.lexicon()].map((e) => [e.term, e.df, e.cf, [...x.postingsOf(e.term).docIds]]);
    expect(terms(b)).toEqual(terms(a));
  } finally {
    a.close();
    b.close();
  }
}

describe('background merges', () => {
  it('leave the segments a commit names on disk when a merge of them completes during its fsyncs', async () => {
    const dir = fresh('commit-race');
    const gate = mergeGate();
    const writer = await openWriter(dir, { ...analysis, refreshMs: 0, mergePolicy: { factor: 2, floorDocuments: 1 }, onMergeWritten: gate.onMergeWritten });
    await writer.add(docsOf([[0, 1], [2]]));
    await writer.refresh();
    await writer.add(docsOf([[3], [4, 5]], 2));
    // Two segments no commit names yet, of one tier: their merge runs until the gate opens.
    await writer.refresh();
    const inputs = writer.segmentList();
    expect(inputs.map((s) => s.merging)).toEqual([true, true]);
    let fsyncs!: () => void;
    fsyncHold.wait = new Promise<void>((r) => (fsyncs = r));
    const committing = writer.commit();
    // The commit is at its fsyncs when the merge completes.
    await new Promise((r) => setTimeout(r, 50));
    gate.release();
    await writer.waitForMerges();
    expect(writer.segmentList().length).toBe(1);
    fsyncHold.wait = undefined;
    fsyncs();
    await committing;
    // The commit names the inputs: their files are there, and the index opens and verifies.
    for (const s of inputs) expect(existsSync(join(dir, s.name))).toBe(true);
    verifyIndex(dir);
    const r = openIndex(dir);
    expect(idsOf(r)).toEqual(['d0', 'd1', 'd2', 'd3']);
    expect(r.segmentList().length).toBe(2);
    r.close();
    // The next commit names the merged segment; the inputs go.
    await writer.commit();
    for (const s of inputs) expect(existsSync(join(dir, s.name))).toBe(false);
    await writer.close();
    const again = openIndex(dir);
    expect(idsOf(again)).toEqual(['d0', 'd1', 'd2', 'd3']);
    again.close();
  });

  it('let deletes and commits proceed while a merge runs, carry its deletes over, and leave a reader its files', async () => {
    const dir = fresh('carry');
    const gate = mergeGate();
    const writer = await openWriter(dir, { ...analysis, refreshMs: 0, mergePolicy: { factor: 2, floorDocuments: 1 }, onMergeWritten: gate.onMergeWritten });
    const a = docsOf([[0, 1], [2], [3, 0]]);
    const b = docsOf([[1], [4, 5], [0]], 3);
    await writer.add(a);
    await writer.commit();
    await writer.add(b);
    // The flush makes two segments of one tier: their merge starts on a worker thread, and
    // stays running until the gate opens.
    await writer.refresh();
    const [first, second] = writer.segmentList();
    expect(writer.segmentList().map((s) => s.merging)).toEqual([true, true]);
    const before = writer.reader();
    const beforeHits = before.search('whale', { k: 10 });
    expect(idsOf(before)).toEqual(['d0', 'd1', 'd2', 'd3', 'd4', 'd5']);

    // A delete made visible while the merge runs, and committed while it runs.
    await writer.delete(['d1']);
    await writer.refresh();
    await writer.commit();
    expect(writer.segmentList().map((s) => s.merging)).toEqual([true, true]);
    const committed = openIndex(dir);
    expect(idsOf(committed)).toEqual(['d0', 'd2', 'd3', 'd4', 'd5']);
    expect(committed.segmentList().length).toBe(2);
    committed.close();
    // One logged but not refreshed: readers must not see it before the next refresh, merge or not.
    await writer.delete(['d4']);
    expect(writer.segmentList().map((s) => s.merging)).toEqual([true, true]);

    gate.release();
    await writer.waitForMerges();
    expect(writer.segmentList()).toEqual([{ name: expect.stringMatching(/^seg-\d+$/), documents: 6, deleted: 1, merging: false }]);
    let r = writer.reader();
    expect(idsOf(r)).toEqual(['d0', 'd2', 'd3', 'd4', 'd5']);
    r.close();
    await writer.refresh();
    r = writer.reader();
    expect(idsOf(r)).toEqual(['d0', 'd2', 'd3', 'd5']);
    expect(r.search('sea').map((h) => h.externalId)).toEqual([]);
    r.close();

    // The inputs go with the commit that stops naming them; the reader from before keeps its files.
    await writer.commit();
    expect(existsSync(join(dir, first!.name))).toBe(false);
    expect(existsSync(join(dir, second!.name))).toBe(false);
    expect(idsOf(before)).toEqual(['d0', 'd1', 'd2', 'd3', 'd4', 'd5']);
    expect(before.search('whale', { k: 10 })).toEqual(beforeHits);
    expect([...before.postingsOf('sea').docIds]).toEqual([1]);
    before.close();
    await writer.close();
    // Reopened, the merged segment and its carried deletes are what the last commit named.
    const again = await openWriter(dir, { refreshMs: 0 });
    r = again.reader();
    expect(idsOf(r)).toEqual(['d0', 'd2', 'd3', 'd5']);
    r.close();
    await again.close();
    await expectSurvivors(dir, [a[0]!, a[2]!, b[0]!, b[2]!]);
  });

  it('hold adds back only while merges fall behind (more segments than maxSegments)', async () => {
    for (const maxSegments of [1, 40]) {
      const dir = fresh('pressure');
      const gate = mergeGate();
      const writer = await openWriter(dir, { ...analysis, refreshMs: 0, mergePolicy: { factor: 2, floorDocuments: 1 }, maxSegments, onMergeWritten: gate.onMergeWritten });
      await writer.add(docsOf([[0], [1]]));
      await writer.refresh();
      await writer.add(docsOf([[2], [3]], 2));
      await writer.refresh();
      expect(writer.segmentList().map((s) => s.merging)).toEqual([true, true]);
      let added = false;
      const adding = writer.add(docsOf([[4]], 4)).then(() => (added = true));
      if (maxSegments === 1) {
        // Over the bound the add waits for the merge, which the gate holds: it cannot resolve
        // however long the event loop turns (a pause lets a wrong one resolve).
        await new Promise((r) => setTimeout(r, 200));
        expect(added).toBe(false);
        gate.release();
        await adding;
        expect(writer.segmentList().map((s) => s.merging)).toEqual([false]);
      } else {
        // Under it, the add resolves while the merge is held.
        await adding;
        expect(writer.segmentList().map((s) => s.merging)).toEqual([true, true]);
        gate.release();
      }
      await writer.close();
      const r = openIndex(dir);
      expect(idsOf(r)).toEqual(['d0', 'd1', 'd2', 'd3', 'd4']);
      r.close();
    }
  });

  it('run at most maxConcurrentMerges at once, and the policy skips segments a merge holds', async () => {
    const dir = fresh('concurrent');
    const writer = await openWriter(dir, { ...analysis, refreshMs: 0, mergePolicy: { factor: 2, floorDocuments: 1 }, maxConcurrentMerges: 1 });
    for (let i = 0; i < 4; i++) {
      await writer.add(docsOf([[i % WORDS.length]], i));
      await writer.refresh();
      expect(writer.segmentList().filter((s) => s.merging).length).toBeLessThanOrEqual(2);
    }
    await writer.waitForMerges();
    await writer.close();
    const seg = (documents: number, busy = false) => ({ documents, deleted: 0, busy });
    const p = { factor: 2, floorDocuments: 1, maxMergedDocuments: 100, maxDeletedShare: 0.2 };
    expect(pickMergeAround([seg(1, true), seg(1, true), seg(1), seg(1)], p)).toEqual([2, 4]);
    expect(pickMergeAround([seg(1), seg(1, true), seg(1)], p)).toBeUndefined();
    expect(pickMergeAround([seg(4), seg(4), seg(1, true), seg(1), seg(1)], p)).toEqual([3, 5]);
    // Flushes of uneven sizes: smaller segments between larger ones merge with them; a large one
    // does not take in a few small ones (it would be rewritten for little).
    const { pickMerge } = await import('../merge/merge-policy.js');
    const q = { factor: 3, floorDocuments: 10, maxMergedDocuments: 1000, maxDeletedShare: 0.2 };
    const size = (documents: number) => ({ documents, deleted: 0 });
    expect(pickMerge([50, 5, 50, 50].map(size), q)).toEqual([0, 3]);
    expect(pickMerge([500, 50, 5, 50, 5].map(size), q)).toEqual([1, 4]);
    expect(pickMerge([5, 5, 300].map(size), q)).toBeUndefined();
    expect(pickMerge([300, 5, 5].map(size), q)).toBeUndefined();
    await expectSurvivors(dir, docsOf([[0], [1], [2], [3]]));
  });

  const opArb = fc.oneof(
    fc.record({ op: fc.constant('add' as const), docs: fc.array(fc.array(fc.integer({ min: 0, max: WORDS.length - 1 }), { maxLength: 6 }), { minLength: 1, maxLength: 5 }) }),
    fc.record({ op: fc.constant('delete' as const), picks: fc.array(fc.nat(), { minLength: 1, maxLength: 3 }) }),
    fc.record({ op: fc.constant('replace' as const), pick: fc.nat(), doc: fc.array(fc.integer({ min: 0, max: WORDS.length - 1 }), { maxLength: 6 }) }),
    fc.record({ op: fc.constantFrom('refresh' as const, 'refresh' as const, 'commit' as const, 'settle' as const) }),
  );
  type Doc = { id: string; text: string };
  type Op = typeof opArb extends fc.Arbitrary<infer T> ? T : never;

  /** reader() holds exactly `expected`, in order, and finds exactly those of them holding each of `words`. */
  const expectReaderShows = (writer: IndexWriter, expected: readonly Doc[], words: readonly string[]) => {
    const r = writer.reader();
    try {
      expect(idsOf(r)).toEqual(expected.map((d) => d.id));
      for (const w of words) {
        expect(r.search(w, { k: 1000 }).map((h) => h.externalId).sort()).toEqual(expected.filter((d) => d.text.split(' ').includes(w)).map((d) => d.id).sort());
      }
    } finally {
      r.close();
    }
  };

  /** Applies an add, delete or replace of opArb to `writer` and to `live` (new ids numbered on from the last); other operations are the caller's. */
  const documentOps = (writer: IndexWriter, live: LiveDocuments<Doc>) => {
    let next = 0;
    return async (o: Op): Promise<void> => {
      if (o.op === 'add') {
        const docs = docsOf(o.docs, next);
        next += docs.length;
        await live.add(writer, docs);
      } else if (o.op === 'delete') await live.delete(writer, o.picks);
      else if (o.op === 'replace') await live.replace(writer, o.pick, (id) => ({ id, text: o.doc.map((w) => WORDS[w]).join(' ') }));
    };
  };

  it('whenever merges complete, reader() shows exactly the last refresh, and every refresh the live documents', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 16 }), fc.integer({ min: 1, max: 2 }), async (ops, maxConcurrentMerges) => {
        const dir = fresh('prop');
        const writer = await openWriter(dir, { ...analysis, refreshMs: 0, mergePolicy: { factor: 2, floorDocuments: 1, maxDeletedShare: 0.3 }, maxConcurrentMerges });
        // The reference: live documents in arrival order (a replaced one moves to the end), and those at the last refresh.
        const live = new LiveDocuments<Doc>();
        const apply = documentOps(writer, live);
        let seen: Doc[] = [];
        for (const o of ops) {
          await apply(o);
          if (o.op === 'refresh' || o.op === 'commit') {
            await (o.op === 'refresh' ? writer.refresh() : writer.commit());
            seen = [...live.docs];
          } else if (o.op === 'settle') await writer.waitForMerges();
          expectReaderShows(writer, seen, ['whale', 'sea', 'moby']);
        }
        await writer.close();
        await expectSurvivors(dir, live.docs);
      }),
      { numRuns: 20, seed: 31 },
    );
  });

  it('with flushes completing in the background (one feed thread or two), reader() shows exactly the operations up to searchableSequence: a replace never half-done', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 20 }), fc.integer({ min: 1, max: 400 }), fc.integer({ min: 1, max: 2 }), async (ops, flushBytes, feedThreads) => {
        const dir = fresh('background');
        const writer = await openWriter(dir, { ...analysis, refreshMs: 0, backgroundFlushes: true, flushBytes, feedThreads, mergePolicy: { factor: 2, floorDocuments: 1, maxDeletedShare: 0.3 } });
        // The reference: the live documents after each operation, by its sequence number.
        const live = new LiveDocuments<Doc>();
        const apply = documentOps(writer, live);
        const states = new Map<number, Doc[]>([[0, []]]);
        const check = () => expectReaderShows(writer, states.get(writer.searchableSequence)!, ['whale', 'sea']);
        for (const o of ops) {
          await apply(o);
          if (o.op === 'refresh' || o.op === 'commit') {
            await (o.op === 'refresh' ? writer.refresh() : writer.commit());
            expect(writer.searchableSequence).toBe(writer.sequence());
          } else if (o.op === 'settle') {
            // Another schedule: the flush in progress may complete meanwhile.
            await writer.waitForMerges();
            await new Promise((r) => setTimeout(r, 5));
          }
          states.set(writer.sequence(), [...live.docs]);
          check();
        }
        await writer.refresh();
        check();
        await writer.close();
        await expectSurvivors(dir, live.docs);
      }),
      { numRuns: 25, seed: 32 },
    );
  });
});

describe('a process with nothing but a writer', () => {
  it('lives until its adds resolve while they wait for the feed thread, and exits once the writer is closed', () => {
    // Nothing else keeps the event loop alive: a wait on an unref'd thread would end the process early (exit 13).
    const child = join(fresh('alone'), 'child.mjs');
    mkdirSync(join(child, '..'), { recursive: true });
    writeFileSync(
      child,
      `import { openWriter } from ${JSON.stringify(new URL('../dist/src/index.js', import.meta.url).href)};
const w = await openWriter(process.argv[2], { stem: 'none', stopwords: 'none', sorter: 'cpu', refreshMs: 0, backgroundFlushes: true, feedThreads: 2, feedLagBytes: 1, mergePolicy: false });
let added = 0;
for (let b = 0; b < 8; b++) added += (await w.add(Array.from({ length: 2000 }, (_, i) => ({ id: b + '-' + i, text: 'whale ship sea harpoon '.repeat(40) + i })))).added;
await w.close();
process.stdout.write('added ' + added + '\\n');
`,
    );
    const dir = fresh('alone-index');
    const out = execFileSync(process.execPath, [child, dir], { encoding: 'utf8' });
    expect(out).toBe('added 16000\n');
    const r = openIndex(dir);
    try {
      expect(r.stats().documents).toBe(16000);
    } finally {
      r.close();
    }
  });
});

/** A tmpfs of `bytes` at a new folder, or undefined where this process cannot mount one (not root). */
function smallDisk(bytes: number): { dir: string; unmount(): void } | undefined {
  const dir = fresh('tmpfs');
  mkdirSync(dir);
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${bytes}`, 'tmpfs', dir], { stdio: 'ignore' });
  } catch {
    return undefined;
  }
  return { dir, unmount: () => execFileSync('umount', [dir]) };
}

describe('a full disk during a merge', () => {
  const disk = smallDisk(8 << 20);
  it.skipIf(!disk)('leaves the last commit searchable and the writer usable; the merge runs again at a commit once there is room', async () => {
    try {
      const dir = join(disk!.dir, 'index');
      // Two committed segments of many distinct terms, not merged yet.
      const text = (i: number) => Array.from({ length: 60 }, (_, j) => `w${i}x${j} ${WORDS[(i + j) % WORDS.length]}`).join(' ');
      const docs = Array.from({ length: 600 }, (_, i) => ({ id: `d${i}`, text: text(i) }));
      const first = await openWriter(dir, { ...analysis, refreshMs: 0, mergePolicy: false });
      await first.add(docs.slice(0, 300));
      await first.refresh();
      await first.add(docs.slice(300));
      await first.close();
      // Fill the disk but for 64 KiB: less than the merged segment needs, enough for the log.
      const free = () => {
        const s = statfsSync(disk!.dir);
        return s.bavail * s.bsize;
      };
      writeFileSync(join(disk!.dir, 'filler'), Buffer.alloc(free() - (64 << 10)));
      const warnings: string[] = [];
      const writer = await openWriter(dir, { refreshMs: 0, mergePolicy: { factor: 2, floorDocuments: 1 }, onWarning: (m) => warnings.push(m) });
      expect(writer.segmentList().map((s) => s.merging)).toEqual([true, true]);
      await writer.waitForMerges();
      expect(warnings.length).toBe(1);
      expect(warnings[0]).toMatch(/^merge of seg-\d+, seg-\d+ failed, merges wait for the next commit: /);
      expect(writer.segmentList().map((s) => s.merging)).toEqual([false, false]);
      // The last commit answers in full, in another reader as in the writer's.
      const committed = openIndex(dir);
      expect(committed.stats().documents).toBe(600);
      expect(committed.search('w5x7').map((h) => h.externalId)).toEqual(['d5']);
      committed.close();
      // The writer goes on: a delete is logged, refreshed and committed (a failed merge again, no more).
      await writer.delete(['d5']);
      await writer.commit();
      await writer.waitForMerges();
      const after = openIndex(dir);
      expect(after.search('w5x7')).toEqual([]);
      expect(after.stats().documents).toBe(599);
      after.close();
      // With room again, the next commit lets the merge run, and it completes.
      rmSync(join(disk!.dir, 'filler'));
      await writer.commit();
      await writer.waitForMerges();
      expect(writer.segmentList().map((s) => s.merging)).toEqual([false]);
      await writer.close();
      expect(warnings.every((w) => w.startsWith('merge of'))).toBe(true);
      const merged = openIndex(dir);
      expect(merged.segmentList().length).toBe(1);
      expect(merged.stats().documents).toBe(599);
      expect(merged.search('w6x1').map((h) => h.externalId)).toEqual(['d6']);
      merged.close();
      verifyIndex(dir);
    } finally {
      disk!.unmount();
    }
  });
});

describe('writer memory', () => {
  it('splits the budget, refuses one too small in one line, and flushes by bytes under a small one', async () => {
    expect(writerMemory(2 ** 30, 2)).toEqual({ flushBytes: 16 << 20, flushBuild: 2 ** 28, mergeInputs: 2 ** 27 });
    expect(writerMemory(256 << 20, 1)).toEqual({ flushBytes: 16 << 20, flushBuild: 64 << 20, mergeInputs: 64 << 20 });
    await expect(openWriter(fresh('small'), { memory: '128MiB' })).rejects.toThrow('writer memory 128 MiB is too small: a writer needs at least 256 MiB (a quarter of it for each flush\'s build)');
    // 256 MiB buffers 16 MiB: 17 MiB of documents make a segment with no refresh.
    const dir = fresh('bytes');
    const writer = await openWriter(dir, { ...analysis, memory: '256MiB', refreshMs: 0, mergePolicy: false });
    const big = 'whale '.repeat(64 << 10);
    for (let i = 0; i < 46; i++) await writer.add([{ id: `b${i}`, text: big }]);
    // That flush completes in the background; the adds after it are buffered.
    await vi.waitFor(() => expect(writer.segmentList().length).toBe(1), { timeout: 60_000, interval: 10 });
    const segments = writer.segmentList();
    expect(segments[0]!.documents).toBe(43); // the add that crossed 16 MiB flushed it: 43 × 384 KiB
    expect(writer.searchableSequence).toBe(43);
    await writer.close();
  });
});
