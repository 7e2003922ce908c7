/** What cli-prestart.ts reads from a build's arguments before commander parses them. */
import { defaultWorkerCount, type GpuSortChoice } from './shared/options.js';

/** The value of option `name` in a build's arguments (`--name v` or `--name=v`). */
function optionArg(args: readonly string[], name: string): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === name) return args[i + 1];
    if (a.startsWith(`${name}=`)) return a.slice(name.length + 1);
  }
  return undefined;
}

/** The sorter choice the build will make (resolvePipeline's rules), or undefined: the CPU, or arguments it will refuse. */
export function gpuChoiceArg(args: readonly string[]): { choice: 'auto' | 'gpu'; gpuSort: GpuSortChoice } | undefined {
  const pipeline = optionArg(args, '--pipeline') ?? 'auto';
  const sorter = optionArg(args, '--sorter') ?? 'auto';
  const gpuSort = optionArg(args, '--gpu-sort') ?? 'bsn';
  if (!['auto', 'gpu', 'gpu+'].includes(pipeline) || !['auto', 'gpu'].includes(sorter) || !['bsn', 'radix', 'auto'].includes(gpuSort)) return undefined;
  return { choice: pipeline !== 'auto' || sorter === 'gpu' ? 'gpu' : 'auto', gpuSort: gpuSort as GpuSortChoice };
}

/** The --workers value of a build's arguments, or the build's default (cores - 1, at most 32). */
export function workersArg(args: readonly string[]): number {
  const v = optionArg(args, '--workers');
  if (v === undefined) return defaultWorkerCount();
  return /^\d+$/.test(v) && Number(v) >= 1 ? Math.min(Number(v), 64) : 0;
}
