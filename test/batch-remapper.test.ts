import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BatchRemapper } from '../indexer/fill/batch-remapper.js';
import { PairBlockBuilder } from '../indexer/fill/block.js';
import { TermDictionary } from '../indexer/fill/dictionary.js';
import { DocumentTable } from '../indexer/fill/documents.js';
import type { ParsedBatch } from '../indexer/parse/parse-messages.js';
import { newSharedTermIds, SharedTermIds, UNRESOLVED_BIT } from '../indexer/fill/shared-term-ids.js';
import { createTokenizer } from '../indexer/analysis/tokenizer.js';
import { RawTokenList, type RawTokenBytes } from '../indexer/scan/raw-token-list.js';

/** Tokens as a batch sends them (RawTokenList). */
function rawTokens(tokens: string[]): RawTokenBytes {
  const list = new RawTokenList();
  for (const t of tokens) list.pushString(t);
  return list.take();
}

/** A worker's batch of one document whose pairs are all local ids (nothing mapped yet). */
function batch(newTerms: string[], firstNewTerm: number, locals: number[]): ParsedBatch {
  const pairs = new Uint32Array(2 * locals.length);
  locals.forEach((l, i) => {
    pairs[2 * i] = l | UNRESOLVED_BIT;
    pairs[2 * i + 1] = 0;
  });
  return {
    type: 'batch',
    seq: 0,
    part: 0,
    last: true,
    firstNewTerm,
    newTerms: rawTokens(newTerms),
    pairs,
    pairCount: locals.length,
    unresolved: Uint32Array.from(locals.keys()),
    externalIds: ['d'],
    path: 'f.jsonl',
    lengths: Uint32Array.from([locals.length]),
    bytes: 1,
    skips: [],
    warnings: [],
    busyMs: 0,
    idleMs: 0,
    scanTableBytes: 0,
  } as ParsedBatch;
}

describe('BatchRemapper: workers send raw tokens, the main thread stems them once', () => {
  it('raw tokens of two workers with one stem get one TermId, numbered in the order pairs are copied', () => {
    const dictionary = new TermDictionary();
    const remapper = new BatchRemapper(dictionary, new DocumentTable(), [new SharedTermIds(newSharedTermIds()), new SharedTermIds(newSharedTermIds())], createTokenizer());
    const block = new PairBlockBuilder(16);
    const copyAll = (worker: number, b: ParsedBatch) => {
      const state = remapper.begin(worker, b);
      remapper.copy(state, 0, b.pairCount, block);
      block.count += b.pairCount;
    };
    copyAll(0, batch(['running', 'whale', 'runs'], 0, [0, 1, 2, 0]));
    copyAll(1, batch(['whales', 'run', 'ship'], 0, [0, 1, 2]));
    expect(dictionary.terms).toEqual(['run', 'whale', 'ship']);
    expect(Array.from(block.pairs.subarray(0, 2 * block.count)).filter((_, i) => i % 2 === 0)).toEqual([0, 1, 0, 0, 1, 0, 2]);
  });

  it('a batch of local ids (one worker: ParsedBatch.localIds) is mapped pair by pair, with the same TermIds', () => {
    const local = (b: ParsedBatch): ParsedBatch => {
      const pairs = b.pairs.map((w, i) => (i % 2 === 0 ? w & ~UNRESOLVED_BIT : w));
      return { ...b, pairs, unresolved: new Uint32Array(0), localIds: true };
    };
    const run = (asLocal: boolean) => {
      const dictionary = new TermDictionary();
      const remapper = new BatchRemapper(dictionary, new DocumentTable(), [new SharedTermIds(newSharedTermIds())], createTokenizer());
      const block = new PairBlockBuilder(16);
      for (const b of [batch(['running', 'whale', 'runs'], 0, [0, 1, 2, 0]), batch(['ship', 'whales'], 3, [3, 1, 4, 0])]) {
        const state = remapper.begin(0, asLocal ? local(b) : b);
        // In two copies, as a batch that crosses a block boundary is copied.
        remapper.copy(state, 0, 1, block);
        block.count += 1;
        remapper.copy(state, 1, b.pairCount - 1, block);
        block.count += b.pairCount - 1;
      }
      return { terms: dictionary.terms, pairs: Array.from(block.pairs.subarray(0, 2 * block.count)) };
    };
    expect(run(true)).toEqual(run(false));
    expect(run(true).terms).toEqual(['run', 'whale', 'ship']);
    expect(run(true).pairs.filter((_, i) => i % 2 === 0)).toEqual([0, 1, 0, 0, 2, 1, 1, 0]);
  });

  it("gives each raw token sent as bytes the tokenizer's term: [a-z0-9] stemmed from its bytes, UTF-8 analysed, over-long kept", () => {
    const tokenizer = createTokenizer();
    const raws = ['relational', 'cafés', 'naïve', 'москва', '東', '2002', 'abc123', 'x'.repeat(300) + 'ing', 'ponies', 'running'];
    const dictionary = new TermDictionary();
    const remapper = new BatchRemapper(dictionary, new DocumentTable(), [new SharedTermIds(newSharedTermIds())], tokenizer);
    const b = batch(raws, 0, raws.map((_, i) => i));
    remapper.copy(remapper.begin(0, b), 0, b.pairCount, new PairBlockBuilder(16));
    expect(dictionary.terms).toEqual(raws.map((r) => tokenizer.analyzeToken(r)));
  });

  it('a stopword the tokenizer analyses (not [a-z0-9]) sent as a term is an error, not a term', () => {
    // ASCII ones are stemmed from their bytes, unchecked: the worker's scanner holds them as stopwords.
    const dir = mkdtempSync(join(tmpdir(), 'gpuindex-stop-'));
    try {
      writeFileSync(join(dir, 'stop.txt'), 'für\nthe\n');
      const remapper = new BatchRemapper(new TermDictionary(), new DocumentTable(), [new SharedTermIds(newSharedTermIds())], createTokenizer({ stopwords: join(dir, 'stop.txt') }));
      const b = batch(['für'], 0, [0]);
      const state = remapper.begin(0, b);
      expect(() => remapper.copy(state, 0, 1, new PairBlockBuilder(4))).toThrow('a stopword reached the term dictionary: "für"');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
