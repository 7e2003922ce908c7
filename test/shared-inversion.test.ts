import fc from 'fast-check';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildKeeping, type KeptBetweenBuilds } from '../src/build.js';
import { SharedInversion } from '../indexer/scan/shared-inversion.js';
import { BufferPool } from '../runtime/buffer-pool.js';
import type { BuildOptions, InputDocument } from '../src/shared/options.js';

const work = mkdtempSync(join(tmpdir(), 'gpuindex-shared-inversion-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
let n = 0;

/** Every file of an index but MANIFEST.json (its build settings name the output folder's checksums only). */
function filesOf(dir: string): Record<string, Buffer> {
  const out: Record<string, Buffer> = {};
  for (const f of readdirSync(dir).sort()) if (f !== 'MANIFEST.json') out[f] = readFileSync(join(dir, f));
  return out;
}

// Words that share stems, stopwords, non-ASCII words (the Unicode path), and numbers.
const word = fc.constantFrom('run', 'running', 'runs', 'the', 'and', 'whale', 'whales', 'Café', 'naïve', 'straße', '東京', 'x1', '42', 'of', 'ship', 'shipping', 'ÉCOLE');
const text = fc.array(word, { maxLength: 40 }).map((w) => w.join(' '));
const segment = fc.array(fc.record({ text, title: fc.option(text, { nil: undefined }) }), { minLength: 1, maxLength: 25 });
const analyses: Partial<BuildOptions>[] = [{}, { stem: 'none', stopwords: 'none' }, { titleWeight: 2 }];

async function build(docs: InputDocument[], options: Partial<BuildOptions>, kept: KeptBetweenBuilds = {}, blockSize = 64): Promise<Record<string, Buffer>> {
  const output = join(work, `i${n++}`);
  // Small blocks: a segment of several blocks fills one in the middle of a document.
  await buildKeeping({ input: docs, output, sorter: 'cpu', blockSize, ...options }, kept);
  const files = filesOf(output);
  rmSync(output, { recursive: true, force: true });
  return files;
}

describe('SharedInversion and BufferPool (a thread building segment after segment)', () => {
  it('gives each build the same index bytes as a build with its own inverter and buffers, whatever came before and with any analysis', async () => {
    await fc.assert(
      // Blocks of 64 pairs (several runs) or of 4,096 (one block, merged from memory).
      fc.asyncProperty(fc.array(fc.tuple(segment, fc.nat(analyses.length - 1), fc.constantFrom(64, 4096)), { minLength: 1, maxLength: 5 }), async (segments) => {
        const kept = { inversion: new SharedInversion(), buffers: new BufferPool() };
        let id = 0;
        for (const [docs, a, blockSize] of segments) {
          const input = docs.map((d) => ({ id: `d${id++}`, text: d.text, ...(d.title !== undefined ? { title: d.title } : {}) }));
          const alone = await build(input, analyses[a]!, {}, blockSize);
          const after = await build(input, analyses[a]!, kept, blockSize);
          expect(after).toEqual(alone);
        }
      }),
      { numRuns: 25 },
    );
  });

  it('lets a second build that starts while the first still parses invert on its own, with buffers of its own', async () => {
    const kept = { inversion: new SharedInversion(), buffers: new BufferPool() };
    // Documents of 61 terms in blocks of 64 pairs: blocks fill in the middle of documents, and the
    // parse waits for the block's run to be written there, holding the document's TermIds.
    const docs = (prefix: string, words: string) => Array.from({ length: 30 }, (_, i) => ({ id: `${prefix}${i}`, text: `${Array.from({ length: 20 }, () => words).join(' ')} ${i}` }));
    const a = docs('a', 'whale ship sailing');
    const b = docs('b', 'naïve café running');
    // The first build's documents arrive slowly: the second starts and finishes meanwhile.
    async function* slowly(list: InputDocument[]) {
      for (const d of list) {
        await new Promise((r) => setTimeout(r, 1));
        yield d;
      }
    }
    const first = join(work, `i${n++}`);
    const second = join(work, `i${n++}`);
    const building = buildKeeping({ input: slowly(a), output: first, sorter: 'cpu', blockSize: 64 }, kept);
    await buildKeeping({ input: b, output: second, sorter: 'cpu', blockSize: 64 }, kept);
    await building;
    expect(filesOf(first)).toEqual(await build(a, {}));
    expect(filesOf(second)).toEqual(await build(b, {}));
  });
});
