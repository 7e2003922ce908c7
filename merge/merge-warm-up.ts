/**
 * A small merge of synthetic runs, for a merge thread started as the CLI starts (while the build
 * lists and plans its crawl and the cores are idle) to run while it waits: a thread merges its
 * range once, so without it the range runs in V8's unoptimized tiers and the optimizing compiles
 * wait for CPU on the build's tail, when every core is busy (one thread's merge of 2.5 M pairs:
 * 96 ns a pair cold, 54-57 ns once warm, on the 2-core machine). Run on the tail itself, as the
 * threads start there, it took the cores the parse workers' last sorts needed.
 * The runs are shaped as a worker-lexicons build's (keys walked through each worker's order and
 * finals, document numbers mapped to docIDs), and the range writes postings, figures and
 * impacts as a build's do, so the same functions see the same types.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { writeRunFile } from './runs.js';
import { sharedLexicons, type RunLexicons } from './run-lexicons.js';
import { runKeysAt } from './term-ranges.js';
import { mergeRange } from './range-merge.js';
import { inSharedMemory } from '../runtime/worker-script.js';

/** Synthetic workers (runs), terms and documents of the warm-up: ~120 k pairs. */
const WORKERS = 3;
const TERMS = 4000;
const DOCUMENTS = 3000;
/** Term t is in about a share min(1, COMMON / (t + 1)) of the documents (Zipf-like). */
const COMMON = 6;

/** Runs the warm-up merge in a folder of its own in `parent`, removed after; false if it could not. */
export function warmUpMerge(parent: string): boolean {
  let dir: string | undefined;
  try {
    dir = mkdtempSync(join(parent, 'merge-'));
    const { runPaths, lexicons, lengths } = writeSyntheticRuns(dir);
    const keys = runKeysAt(runPaths, [0], lexicons);
    // The figures form: a build of fewer than 64 Ki terms, whose merge is short enough for its cold start to count.
    mergeRange({ runPaths, chunkPairs: 4096, startTerm: 0, keys, lexicons, lengths, partPath: join(dir, 'postings'), figuresPartPath: join(dir, 'figures'), impactsPartPath: join(dir, 'impacts') });
    return true;
  } catch {
    return false;
  } finally {
    if (dir) rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * WORKERS runs: worker w holds documents w, w + WORKERS, ... as its numbers 0, 1, ...; every
 * worker knows every term, its ids in code point order (so its order and its finals are the
 * identity). Each term's documents are drawn ascending, by random gaps.
 */
function writeSyntheticRuns(dir: string): { runPaths: string[]; lexicons: RunLexicons; lengths: Uint32Array } {
  const runPaths: string[] = [];
  const lengths = new Uint32Array(DOCUMENTS);
  for (let d = 0; d < DOCUMENTS; d++) lengths[d] = 40 + (d % 200);
  let seed = 12345;
  const random = (): number => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
  const lexicons: RunLexicons = { lexicons: [], owners: [] };
  const identity = Uint32Array.from({ length: TERMS }, (_, t) => t);
  for (let w = 0; w < WORKERS; w++) {
    const docs = Math.ceil((DOCUMENTS - w) / WORKERS);
    let pairs = new Uint32Array(1 << 16);
    let count = 0;
    for (let t = 0; t < TERMS; t++) {
      const gap = Math.max(1, (t + 1) / COMMON);
      for (let n = Math.floor(random() * gap); n < docs; n += 1 + Math.floor(random() * 2 * (gap - 1))) {
        if (2 * count + 2 > pairs.length) {
          const grown = new Uint32Array(2 * pairs.length);
          grown.set(pairs);
          pairs = grown;
        }
        pairs[2 * count] = t;
        pairs[2 * count + 1] = n;
        count++;
      }
    }
    const path = join(dir, `run-${w}.bin`);
    writeRunFile(path, pairs, count, TERMS);
    runPaths.push(path);
    lexicons.lexicons.push({ order: identity, finals: identity, docIds: Uint32Array.from({ length: docs }, (_, n) => n * WORKERS + w) });
    (lexicons.owners as number[]).push(w);
  }
  return { runPaths, lexicons: sharedLexicons(lexicons), lengths: inSharedMemory(lengths) };
}
