import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { buildIndex } from '../src/build.js';
import { mergeSegments } from '../merge/segment-merge.js';
import { writeDeletes } from '../merge/deletes.js';
import { verifyIndex } from '../merge/verify.js';
import { readIndexContent } from './helpers/index-files.js';

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
