/**
 * `--shard i/N`: the i-th of N contiguous, byte-balanced pieces of a crawl, for builds run as
 * the tasks of a cluster scheduler and joined afterwards (`gpuindex join`). The cut depends only
 * on the crawl's sorted file list and sizes, so every task computes the same one: shard i holds
 * the bytes [i·T/N, (i+1)·T/N) of the files laid end to end. A file that straddles a cut goes to
 * both sides at a line boundary when it is uncompressed JSONL (the lines that start on each
 * side, as parse tasks cut it), and whole to the shard its first byte falls in otherwise.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { UserError } from '../../src/shared/errors.js';
import { cuttableJsonl, type LineState } from './jsonl-ranges.js';

export interface Shard {
  /** 0-based. */
  index: number;
  count: number;
}

/** A file of the shard, whole or the lines starting in [from, to). */
export interface ShardPiece {
  path: string;
  size: number;
  from: number;
  /** Equal to size when the piece runs to the end of the file. */
  to: number;
}

/** Parses `i/N` (0 ≤ i < N), or `auto`: the scheduler's task index and count from `env`. */
export function parseShard(value: string, env: NodeJS.ProcessEnv = process.env): Shard {
  if (value === 'auto') return shardFromScheduler(env);
  const m = /^(\d+)\/(\d+)$/.exec(value);
  if (!m) throw new UserError(`--shard must be i/N (0 <= i < N) or auto, got "${value}"`);
  return checked(Number(m[1]), Number(m[2]), `--shard ${value}`);
}

/**
 * Slurm array jobs: SLURM_ARRAY_TASK_ID counted from SLURM_ARRAY_TASK_MIN, of
 * SLURM_ARRAY_TASK_COUNT. Kubernetes Indexed Jobs: JOB_COMPLETION_INDEX, of JOB_COMPLETIONS
 * (Kubernetes does not set the count: the Job's manifest passes spec.completions under that name).
 */
function shardFromScheduler(env: NodeJS.ProcessEnv): Shard {
  if (env.SLURM_ARRAY_TASK_ID !== undefined) {
    const id = integer(env.SLURM_ARRAY_TASK_ID, 'SLURM_ARRAY_TASK_ID');
    const min = env.SLURM_ARRAY_TASK_MIN !== undefined ? integer(env.SLURM_ARRAY_TASK_MIN, 'SLURM_ARRAY_TASK_MIN') : 0;
    if (env.SLURM_ARRAY_TASK_COUNT === undefined) throw new UserError('--shard auto: SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_TASK_COUNT is not');
    return checked(id - min, integer(env.SLURM_ARRAY_TASK_COUNT, 'SLURM_ARRAY_TASK_COUNT'), '--shard auto (Slurm)');
  }
  if (env.JOB_COMPLETION_INDEX !== undefined) {
    if (env.JOB_COMPLETIONS === undefined) throw new UserError('--shard auto: JOB_COMPLETION_INDEX is set but JOB_COMPLETIONS is not (pass the Job\'s spec.completions)');
    return checked(integer(env.JOB_COMPLETION_INDEX, 'JOB_COMPLETION_INDEX'), integer(env.JOB_COMPLETIONS, 'JOB_COMPLETIONS'), '--shard auto (Kubernetes)');
  }
  throw new UserError('--shard auto: no scheduler task found (SLURM_ARRAY_TASK_ID or JOB_COMPLETION_INDEX)');
}

function integer(v: string, name: string): number {
  if (!/^\d+$/.test(v)) throw new UserError(`${name} must be a non-negative integer, got "${v}"`);
  return Number(v);
}

function checked(index: number, count: number, what: string): Shard {
  if (count < 1 || index >= count) throw new UserError(`${what}: shard index ${index} is not in 0..${count - 1}`);
  return { index, count };
}

/** The pieces of shard `shard` of the crawl's files under `base` (crawl order) with their sizes. */
export function shardPieces(base: string, files: readonly string[], sizes: readonly number[], shard: Shard): ShardPiece[] {
  const total = sizes.reduce((a, b) => a + b, 0);
  const cut = (i: number) => Math.floor((i * total) / shard.count);
  const lo = cut(shard.index);
  const hi = cut(shard.index + 1);
  const pieces: ShardPiece[] = [];
  let fileStart = 0;
  files.forEach((path, i) => {
    const size = sizes[i]!;
    const fileEnd = fileStart + size;
    if (size > 0 && fileStart < hi && fileEnd > lo && (fileStart < lo || fileEnd > hi) && cuttableJsonl(base, path)) {
      // Straddles a cut: the lines starting on this side of it.
      pieces.push({ path, size, from: Math.max(lo, fileStart) - fileStart, to: Math.min(hi, fileEnd) - fileStart });
    } else if ((fileStart >= lo && fileStart < hi) || (fileStart === total && shard.index === shard.count - 1)) {
      pieces.push({ path, size, from: 0, to: size });
    }
    fileStart = fileEnd;
  });
  return pieces;
}

/**
 * Where line numbering stands at byte `from` of a file: the lines that start before it (a
 * piece holds the lines that start in [from, to), so line 1 and each line after a newline at
 * p < from - 1). `items` is never 0: the file has content before, so it is not an empty file.
 */
export function linesBefore(root: string, path: string, from: number): LineState {
  const fd = openSync(join(root, path), 'r');
  try {
    const buf = Buffer.allocUnsafe(1 << 20);
    let lines = 1;
    for (let pos = 0; pos < from - 1; ) {
      const n = readSync(fd, buf, 0, Math.min(buf.length, from - 1 - pos), pos);
      if (n === 0) break;
      const part = buf.subarray(0, n);
      for (let i = part.indexOf(10); i !== -1; i = part.indexOf(10, i + 1)) lines++;
      pos += n;
    }
    return { lineBase: lines, items: 1 };
  } finally {
    closeSync(fd);
  }
}
