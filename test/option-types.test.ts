/**
 * Every option of the public options objects (buildIndex, openWriter, openIndex, search) given
 * a value of the wrong type is a UserError of one line naming the option, what it must be and
 * what was given, before anything is written; and valid values, every option set away from its
 * default, still build, write and search.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildIndex } from '../src/build.js';
import { openIndex, type ReaderOptions, type SearchOptions } from '../src/reader.js';
import { openWriter, type WriterOptions } from '../src/writer.js';
import { UserError } from '../src/shared/errors.js';
import type { BuildOptions, TokenizerOptions } from '../src/shared/options.js';
import * as buildChecks from '../src/build/context.js';
import * as writerChecks from '../src/writer.js';
import * as readerChecks from '../src/reader.js';
import * as tokenizerChecks from '../indexer/analysis/tokenizer.js';
import { shown } from '../src/shared/check.js';

const work = mkdtempSync(join(tmpdir(), 'gpuindex-option-types-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
let serial = 0;
const fresh = (name: string): string => join(work, `${name}-${serial++}`);

const crawl = join(work, 'crawl');
const index = join(work, 'index');
beforeAll(async () => {
  mkdirSync(crawl);
  const lines = Array.from({ length: 40 }, (_, i) => JSON.stringify({ id: `d${i}`, title: i % 3 ? `whale ${i}` : 'white whale', body: `the white whale and ship number ${i} 鯨の海`, text: 'ignored' }));
  writeFileSync(join(crawl, 'a.jsonl'), lines.slice(0, 20).join('\n') + '\n');
  writeFileSync(join(crawl, 'b.jsonl'), lines.slice(20).join('\n') + '\n');
  await buildIndex({ input: crawl, output: index, sorter: 'cpu' });
});

/** The option's name as a message gives it: the CLI flag where there is one (`--block-size`), else the property. */
function named(message: string, option: string): boolean {
  const flag = `--${option.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
  return message.includes(flag) || message.includes(option);
}

/** Checks a refusal: a UserError, one line, naming the option and what was given. */
function expectRefusal(err: unknown, option: string, given: string): void {
  expect(err).toBeInstanceOf(UserError);
  const message = (err as Error).message;
  expect(message.split('\n')).toHaveLength(1);
  expect(named(message, option), `"${message}" names ${option}`).toBe(true);
  expect(message).toMatch(/ must /);
  expect(message.endsWith(`got ${given}`), `"${message}" ends with "got ${given}"`).toBe(true);
}

async function refusal(f: () => unknown): Promise<unknown> {
  try {
    await f();
  } catch (err) {
    return err;
  }
  return undefined;
}

type Row<T> = [option: keyof T & string, value: unknown, given: string];

const BUILD_ROWS: Row<BuildOptions>[] = [
  ['input', 42, '42'],
  ['input', {}, '{}'],
  ['input', '', '""'],
  ['output', 42, '42'],
  ['output', ['out'], '["out"]'],
  ['force', 'no', '"no"'],
  ['force', 1, '1'],
  ['memory', {}, '{}'],
  ['memory', null, 'null'],
  ['memory', true, 'true'],
  ['memoryScope', 1, '1'],
  ['blockSize', '1000', '"1000"'],
  ['sorter', 1, '1'],
  ['sorter', ['cpu'], '["cpu"]'],
  ['gpuSort', true, 'true'],
  ['pipeline', { cpu: true }, '{"cpu":true}'],
  ['workers', '4', '"4"'],
  ['workers', null, 'null'],
  ['workers', 2.5, '2.5'],
  ['fields', 'text=body', '"text=body"'],
  ['fields', { text: 'body' }, '"body"'],
  ['fields', { text: [1] }, '[1]'],
  ['fields', [['text', 'body']], '[["text","body"]]'],
  ['onWarning', 'stderr', '"stderr"'],
  ['verbose', 'yes', '"yes"'],
  ['onProgress', true, 'true'],
  ['resume', 'yes', '"yes"'],
  ['shard', 1, '1'],
  ['shard', { index: 0, count: 2 }, '{"index":0,"count":2}'],
  ['mergeThreads', '2', '"2"'],
  ['positions', 'yes', '"yes"'],
  ['positions', 1, '1'],
  ['signal', {}, '{}'],
  ['signal', 'abort', '"abort"'],
  ['stem', 1, '1'],
  ['stopwords', 0, '0'],
  ['stopwords', ['a', 'the'], '["a","the"]'],
  ['cjk', true, 'true'],
  ['maxTokenLength', '10', '"10"'],
  ['titleWeight', '2', '"2"'],
  ['titleWeight', () => 2, 'a function'],
];

const WRITER_ROWS: Row<WriterOptions>[] = [
  ['positions', 'yes', '"yes"'],
  ['memory', {}, '{}'],
  ['flushBytes', '1', '"1"'],
  ['flushBytes', -1, '-1'],
  ['refreshMs', '0', '"0"'],
  ['refreshMs', Number.NaN, 'NaN'],
  ['fsyncGroupMs', true, 'true'],
  ['mergePolicy', true, 'true'],
  ['mergePolicy', 'tiered', '"tiered"'],
  ['mergePolicy', { factor: '2' }, '"2"'],
  ['mergePolicy', { tiers: 2 }, '"tiers"'],
  ['backgroundFlushes', 1, '1'],
  ['feedThreads', '2', '"2"'],
  ['feedLagBytes', {}, '{}'],
  ['maxConcurrentMerges', '1', '"1"'],
  ['maxSegments', '40', '"40"'],
  ['onMergeWritten', 1, '1'],
  ['stem', 1, '1'],
  ['stopwords', 1, '1'],
  ['cjk', 1, '1'],
  ['maxTokenLength', '1', '"1"'],
  ['titleWeight', '2', '"2"'],
  ['sorter', 1, '1'],
  ['onWarning', 'x', '"x"'],
];

const READER_ROWS: Row<ReaderOptions>[] = [
  ['listCacheBytes', '1', '"1"'],
  ['listCacheBytes', null, 'null'],
  ['rowCacheBytes', {}, '{}'],
];

const SEARCH_ROWS: Row<SearchOptions>[] = [
  ['k', '10', '"10"'],
  ['k1', '0.9', '"0.9"'],
  ['b', null, 'null'],
  ['explain', 'yes', '"yes"'],
  ['exhaustive', 1, '1'],
];

describe('buildIndex: a wrong-typed option is a one-line UserError naming it, and nothing is written', () => {
  it.each(BUILD_ROWS)('%s: %j', async (option, value, given) => {
    const output = fresh('build');
    const options = { input: crawl, output, sorter: 'cpu', [option]: value } as BuildOptions;
    expectRefusal(await refusal(() => buildIndex(options)), option, given);
    if (typeof options.output === 'string') expect(existsSync(output)).toBe(false);
  });

  it('the options themselves must be an object', async () => {
    for (const [options, given] of [['crawl', '"crawl"'], [42, '42'], [[crawl], `[${JSON.stringify(crawl)}]`]] as const) {
      const err = await refusal(() => buildIndex(options as never));
      expect(err).toBeInstanceOf(UserError);
      expect((err as Error).message).toBe(`buildIndex options must be an object, got ${given}`);
    }
  });

  it('the rows cover every option of BuildOptions', () => {
    const options = [...Object.keys(buildChecks.BUILD_OPTION_CHECKS ?? {}), ...Object.keys(tokenizerChecks.TOKENIZER_OPTION_CHECKS ?? {})];
    expect(options.length).toBeGreaterThan(20);
    expect(new Set(BUILD_ROWS.map(([o]) => o))).toEqual(new Set(options));
  });
});

describe('openWriter: a wrong-typed option is a one-line UserError naming it, and no folder is made', () => {
  it.each(WRITER_ROWS)('%s: %j', async (option, value, given) => {
    const dir = fresh('writer');
    const err = await refusal(async () => (await openWriter(dir, { refreshMs: 0, sorter: 'cpu', [option]: value } as WriterOptions)).close());
    expectRefusal(err, option, given);
    expect(existsSync(dir)).toBe(false);
  });

  it('the folder must be a path and the options an object', async () => {
    expectRefusal(await refusal(() => openWriter(42 as never)), 'dir', '42');
    const err = await refusal(() => openWriter(fresh('writer'), 'fast' as never));
    expect((err as Error).message).toBe('openWriter options must be an object, got "fast"');
  });

  it('the rows cover every option of WriterOptions', () => {
    const options = [...Object.keys(writerChecks.WRITER_OPTION_CHECKS ?? {}), ...Object.keys(tokenizerChecks.TOKENIZER_OPTION_CHECKS ?? {})];
    expect(options.length).toBeGreaterThan(15);
    expect(new Set(WRITER_ROWS.map(([o]) => o))).toEqual(new Set(options));
  });
});

describe('openIndex and search: a wrong-typed option is a one-line UserError naming it', () => {
  it.each(READER_ROWS)('openIndex %s: %j', (option, value, given) => {
    expectRefusal(
      refusalSync(() => openIndex(index, { [option]: value } as ReaderOptions).close()),
      option,
      given,
    );
  });

  it.each(SEARCH_ROWS)('search %s: %j', (option, value, given) => {
    const reader = openIndex(index);
    try {
      expectRefusal(
        refusalSync(() => reader.search('whale', { [option]: value } as SearchOptions)),
        option,
        given,
      );
    } finally {
      reader.close();
    }
  });

  it('the path must be a string and the options an object', () => {
    expectRefusal(refusalSync(() => openIndex(42 as never)), 'path', '42');
    expect((refusalSync(() => openIndex(index, 'cached' as never)) as Error).message).toBe('openIndex options must be an object, got "cached"');
    const reader = openIndex(index);
    try {
      expect((refusalSync(() => reader.search('whale', 5 as never)) as Error).message).toBe('search options must be an object, got 5');
    } finally {
      reader.close();
    }
  });

  it('the rows cover every option of ReaderOptions and SearchOptions', () => {
    expect(new Set(READER_ROWS.map(([o]) => o))).toEqual(new Set(Object.keys(readerChecks.READER_OPTION_CHECKS ?? { none: 0 })));
    expect(new Set(SEARCH_ROWS.map(([o]) => o))).toEqual(new Set(Object.keys(readerChecks.SEARCH_OPTION_CHECKS ?? { none: 0 })));
  });
});

function refusalSync(f: () => unknown): unknown {
  try {
    f();
  } catch (err) {
    return err;
  }
  return undefined;
}

describe('what was given, as a message shows it', () => {
  it('is one short line: strings quoted, plain objects and arrays as JSON, other objects by their class', () => {
    expect(shown('4')).toBe('"4"');
    expect(shown('a\nb\u2028')).toBe('"a\\nb\\u2028"');
    expect(shown(null)).toBe('null');
    expect(shown(2n)).toBe('2n');
    expect(shown(Symbol('s'))).toBe('Symbol(s)');
    expect(shown({ a: [1, 'x'] })).toBe('{"a":[1,"x"]}');
    expect(shown(new Map())).toBe('a Map');
    expect(shown(new AbortController())).toBe('an AbortController');
    expect(shown(Object.create(null))).toBe('{}');
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    expect(shown(circular)).toBe('an object');
    const long = shown('x'.repeat(1000));
    expect(long.length).toBe(80);
    expect(long.endsWith('...')).toBe(true);
  });
});

describe('valid values still work', () => {
  it('a build with every option away from its default, then a reader and a search with theirs', async () => {
    const output = fresh('every-option');
    mkdirSync(output); // replaced: force
    const warnings: string[] = [];
    const stages = new Set<string>();
    const tokenizer: Required<TokenizerOptions> = { stem: 'none', stopwords: 'none', cjk: 'bigram', maxTokenLength: 100, titleWeight: 3 };
    const summary = await buildIndex({
      input: crawl,
      output,
      force: true,
      memory: '768MiB',
      memoryScope: 'process',
      blockSize: 50,
      sorter: 'cpu',
      gpuSort: 'radix',
      pipeline: 'cpu',
      workers: 2,
      fields: { id: ['id'], title: ['title'], text: ['body'] },
      onWarning: (m) => warnings.push(m),
      verbose: true,
      onProgress: (e) => stages.add(e.stage),
      resume: true,
      shard: '0/1',
      mergeThreads: 2,
      positions: true,
      signal: new AbortController().signal,
      ...tokenizer,
    });
    expect(summary.documents).toBe(40);
    expect(summary.workers).toBe(2);
    expect(summary.blockSize).toBe(50);
    expect(summary.blocks).toBeGreaterThan(1);
    expect(stages.has('done')).toBe(true);
    const reader = openIndex(output, { listCacheBytes: 0, rowCacheBytes: 1 << 20 });
    try {
      expect(reader.settings.tokenizer).toEqual(tokenizer);
      expect(reader.settings.positions).toBe(true);
      // The text came from `body` (`text` says "ignored"), analysed without stemming or stopwords.
      expect(reader.postingsOf('ignored').docIds.length).toBe(0);
      expect(reader.postingsOf('the').docIds.length).toBe(40);
      expect(reader.postingsOf('鯨の').docIds.length).toBe(40);
      const hits = reader.search('"white whale"', { k: 3, k1: 1.2, b: 0.75, explain: true, exhaustive: true });
      expect(hits).toHaveLength(3);
      expect(hits[0]!.explanation!.length).toBeGreaterThan(0);
    } finally {
      reader.close();
    }
  });

  it('a writer with every option away from its default takes, finds and keeps documents', async () => {
    const dir = fresh('writer-every-option');
    const writer = await openWriter(dir, {
      stem: 'none',
      stopwords: 'none',
      cjk: 'bigram',
      maxTokenLength: 100,
      titleWeight: 3,
      positions: true,
      memory: '384MiB',
      flushBytes: 1 << 20,
      refreshMs: 0,
      fsyncGroupMs: 5,
      mergePolicy: { factor: 2, floorDocuments: 1, maxMergedDocuments: 1000, maxDeletedShare: 0.5 },
      backgroundFlushes: true,
      feedThreads: 1,
      feedLagBytes: 1 << 16,
      maxConcurrentMerges: 1,
      maxSegments: 10,
      onMergeWritten: () => {},
      sorter: 'cpu',
      onWarning: () => {},
    });
    try {
      for (let i = 0; i < 3; i++) {
        await writer.add([{ id: `w${i}`, title: 'White whale', text: `the ship ${i}` }]);
        await writer.refresh();
      }
      await writer.waitForMerges();
      const r = writer.reader();
      try {
        expect(r.search('"white whale"').map((h) => h.externalId).sort()).toEqual(['w0', 'w1', 'w2']);
      } finally {
        r.close();
      }
    } finally {
      await writer.close();
    }
    const reader = openIndex(dir);
    try {
      expect(reader.stats().documents).toBe(3);
    } finally {
      reader.close();
    }
  });
});
