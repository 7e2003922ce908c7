import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { gpuChoiceArg, workersArg } from '../src/cli-prestart-args.js';

afterEach(() => {
  vi.doUnmock('../indexer/sort/sorters.js');
  vi.doUnmock('../gpu/sort-thread.js');
  vi.resetModules();
});

const values = { '--pipeline': ['auto', 'cpu', 'gpu', 'gpu+', 'GPU', ''], '--sorter': ['auto', 'cpu', 'gpu', 'x'], '--gpu-sort': ['bsn', 'radix', 'auto', 'cub'] } as const;
type Name = keyof typeof values;
/** A build's arguments: each option at most once, as `--name v` or `--name=v`, among others. */
const buildArgs = fc
  .record({
    '--pipeline': fc.option(fc.constantFrom(...values['--pipeline']), { nil: undefined }),
    '--sorter': fc.option(fc.constantFrom(...values['--sorter']), { nil: undefined }),
    '--gpu-sort': fc.option(fc.constantFrom(...values['--gpu-sort']), { nil: undefined }),
  })
  .chain((opts) =>
    fc.tuple(fc.constant(opts), fc.array(fc.boolean(), { minLength: 3, maxLength: 3 }), fc.shuffledSubarray(['--workers', '4', '--force', '--json'])).map(([o, joined, extra]) => {
      const args = ['build', './crawl', ...extra];
      (Object.keys(o) as Name[]).forEach((name, i) => {
        const v = o[name];
        if (v !== undefined) args.push(...(joined[i] ? [`${name}=${v}`] : [name, v]));
      });
      return { opts: o, args };
    }),
  );

describe("the CLI's arguments read before commander", () => {
  it('name the sorter the build will open: what resolvePipeline asks chooseSorter for, or nothing where it takes the CPU or refuses the options', async () => {
    const asked: { choice: string; gpuSort: string }[] = [];
    vi.doMock('../indexer/sort/sorters.js', () => ({
      chooseSorter: async (choice: string, gpuSort: string) => {
        asked.push({ choice, gpuSort });
        return { sorter: { kind: choice === 'cpu' ? 'cpu' : 'gpu' } };
      },
    }));
    const { resolvePipeline } = await import('../indexer/pipeline/schedule-choice.js');
    await fc.assert(
      fc.asyncProperty(buildArgs, async ({ opts, args }) => {
        asked.length = 0;
        const resolved = await resolvePipeline(opts['--pipeline'] as never, opts['--sorter'] as never, (opts['--gpu-sort'] ?? 'bsn') as never).catch(() => undefined);
        const gpu = asked.find((a) => a.choice !== 'cpu');
        expect(gpuChoiceArg(args), args.join(' ')).toEqual(resolved && gpu ? { choice: gpu.choice, gpuSort: gpu.gpuSort } : undefined);
      }),
      { numRuns: 500 },
    );
  });

  it('--workers: its value in either form, 0 where it is not a positive integer', () => {
    expect(workersArg(['build', 'x', '--workers', '7'])).toBe(7);
    expect(workersArg(['build', 'x', '--workers=3', '--workers', '9'])).toBe(3);
    expect(workersArg(['build', 'x', '--workers', 'many'])).toBe(0);
    expect(workersArg(['build', 'x', '--workers=1000'])).toBe(64);
  });

  it('a GPU sorter opened ahead is the one the build takes when it asks for the same choice, and only once', async () => {
    let opens = 0;
    vi.doMock('../gpu/sort-thread.js', () => ({
      openGpuSortThread: async () => {
        opens++;
        return `no GPU here (${opens})`;
      },
    }));
    const { prestartGpuSorter, chooseSorter } = await import('../indexer/sort/sorters.js');
    prestartGpuSorter('auto', 'bsn');
    expect((await chooseSorter('auto', 'bsn')).notice).toBe('no GPU (no GPU here (1)); sorting on the CPU');
    expect(opens).toBe(1);
    // Taken once: the next build opens its own.
    expect((await chooseSorter('auto', 'bsn')).notice).toBe('no GPU (no GPU here (2)); sorting on the CPU');
    // Opened ahead for another choice: not taken.
    prestartGpuSorter('auto', 'radix');
    expect((await chooseSorter('auto', 'bsn')).notice).toBe('no GPU (no GPU here (4)); sorting on the CPU');
    expect(opens).toBe(4);
  });
});
