/**
 * GpuSort's kernels run on the CPU, for tests that need no adapter.
 *
 * The generated WGSL (gpu/kernel-source.ts over gpu/kernels/*.wgsl) is translated line by line
 * into JavaScript: the kernels use a small subset of WGSL (u32 arithmetic, vec2<u32> pairs,
 * straight-line compare-exchanges, `for` loops over parts, workgroupBarrier()). Each entry point
 * becomes a generator whose `yield` is the barrier; the invocations of a workgroup run in
 * lock step from barrier to barrier, like a GPU that keeps no ordering inside a phase (a phase
 * touches disjoint pairs per invocation, so any order gives the same result). The dispatches
 * come from the same planDispatches() the GpuSorter uses, so this checks the plan, the grid,
 * the uniforms and the generated index arithmetic (Γ-partition parts, mirrored flips, sentinel
 * rule: nothing is ever stored at an index >= n) without a GPU.
 *
 * u32 arithmetic is emulated by JS numbers: fine below 2^31 pairs, far above test sizes.
 */
import { planDispatches, type DispatchShape } from '../../gpu/bitonic-plan.js';
import { radixSortPairs } from '../../indexer/sort/cpu-sorter.js';
import { applyDocBases } from '../../indexer/fill/doc-bases.js';
import { RunCursor } from '../../merge/runs.js';
import { globalKernelSource, localKernelSource } from '../../gpu/kernel-source.js';
import type { PairSorter } from '../../src/shared/types.js';
import type { GpuSorter } from '../../gpu/gpu-sorter.js';

interface Pair {
  readonly x: number;
  readonly y: number;
}
type Entry = (wid: { x: number; y: number; z: number }, lid: number) => Generator<void, void, void>;
interface Module {
  set(data: Pair[], params: Record<string, number>, tile: Pair[]): void;
  entries: Record<string, Entry | undefined>;
}

/** Translates one generated kernel module to JavaScript (the subset GpuSort's kernels use). */
export function wgslToJs(wgsl: string): string {
  let s = wgsl.replace(/\/\/[^\n]*/g, ''); // comments
  s = s.replace(/struct\s+\w+\s*\{[^}]*\}/g, ''); // Params: a plain object here
  s = s.replace(/^\s*@group\([^\n]*$/gm, '');
  s = s.replace(/^\s*var<workgroup>[^\n]*$/gm, ''); // the tile array is set per workgroup
  s = s.replace(/@compute\s+@workgroup_size\([^)]*\)\s*fn\s+(\w+)\s*\(([^)]*(?:\([^)]*\)[^)]*)*)\)\s*\{/g, (_m, name: string, params: string) => `function* ${name}(${paramNames(params)}) {`);
  s = s.replace(/fn\s+(\w+)\s*\(([^)]*)\)\s*(->\s*[\w<>]+\s*)?\{/g, (_m, name: string, params: string) => `function ${name}(${paramNames(params)}) {`);
  s = s.replace(/\b(const|let|var)\s+(\w+)\s*:\s*[\w<>]+\s*=/g, '$1 $2 =');
  s = s.replace(/vec2<u32>\(/g, 'V(');
  s = s.replace(/\b(0x[0-9a-fA-F]+|\d+)u\b/g, '$1');
  s = s.replace(/\bvar\s+/g, 'let ');
  s = s.replace(/workgroupBarrier\(\);/g, 'yield;');
  const unknown = /\b(vec[34]|array|bitcast|arrayLength|atomic\w*|subgroup\w*|u32|i32|f32)\s*[(<]/.exec(s);
  if (unknown) throw new Error(`wgslToJs: unsupported WGSL construct "${unknown[0]}"`);
  return s;
}

function paramNames(params: string): string {
  return params
    .split(',')
    .map((p) => p.replace(/@builtin\([^)]*\)/g, '').trim())
    .filter(Boolean)
    .map((p) => p.split(':')[0]!.trim())
    .join(', ');
}

const moduleCache = new Map<string, Module>();

function compile(wgsl: string): Module {
  let mod = moduleCache.get(wgsl);
  if (mod) return mod;
  const body = `
    let data, params, tile;
    const V = (x, y) => ({ x, y });
    const select = (f, t, c) => (c ? t : f);
    ${wgslToJs(wgsl)}
    return {
      set(d, p, t) { data = d; params = p; tile = t; },
      entries: {
        local_sort: typeof local_sort === 'function' ? local_sort : undefined,
        local_merge: typeof local_merge === 'function' ? local_merge : undefined,
        global_pass: typeof global_pass === 'function' ? global_pass : undefined,
      },
    };`;
  mod = new Function(body)() as Module;
  moduleCache.set(wgsl, mod);
  return mod;
}

/** Runs one workgroup: its invocations advance from barrier to barrier together. */
function runWorkgroup(entry: Entry, wid: { x: number; y: number; z: number }, threads: number): void {
  let live = Array.from({ length: threads }, (_, lid) => entry(wid, lid));
  while (live.length > 0) {
    const next: typeof live = [];
    let finished = 0;
    for (const inv of live) {
      if (inv.next().done) finished++;
      else next.push(inv);
    }
    if (finished > 0 && next.length > 0) throw new Error('an invocation left the workgroup while others wait at a barrier (non-uniform barrier)');
    live = next;
  }
}

export interface EmulatedSortOptions extends Partial<DispatchShape> {
  /** Fused tile kernels (GpuSorterOptions.fuse). */
  fuse?: boolean;
}

/**
 * Sorts `count` interleaved pairs by running GpuSort's generated kernels on the CPU, with the
 * dispatches GpuSorter would issue. Throws if a kernel stores at an index >= count.
 */
export function emulateGpuSort(pairs: Uint32Array, count: number, o: EmulatedSortOptions = {}): Uint32Array {
  const shape: DispatchShape = {
    tile: o.tile ?? 64,
    tileThreads: o.tileThreads ?? (o.tile ?? 64) / 16,
    maxSteps: o.maxSteps ?? 2,
    globalGroup: o.globalGroup ?? 8,
    maxGroupsPerDimension: o.maxGroupsPerDimension ?? 65535,
  };
  const data: Pair[] = [];
  for (let i = 0; i < count; i++) data.push({ x: pairs[2 * i]!, y: pairs[2 * i + 1]! });
  const zero: Pair = { x: 0, y: 0 };
  for (const d of planDispatches(count, shape)) {
    const p = d.pass;
    const wgsl = p.kind === 'global' ? globalKernelSource(p.m, p.flip, shape.globalGroup) : localKernelSource(shape.tile, shape.tileThreads, o.fuse ?? false);
    const mod = compile(wgsl);
    const entry = mod.entries[p.kind === 'global' ? 'global_pass' : p.kind === 'local-sort' ? 'local_sort' : 'local_merge'];
    if (!entry) throw new Error(`no entry point for ${p.kind}`);
    const threads = p.kind === 'global' ? shape.globalGroup : shape.tileThreads;
    const params = { n: d.params[0], threads: d.params[1], logS: d.params[2], tilesX: d.params[3] };
    for (let y = 0; y < d.groups[1]; y++) {
      for (let x = 0; x < d.groups[0]; x++) {
        // Workgroup memory starts zeroed, as WGSL guarantees.
        mod.set(data, params, new Array<Pair>(shape.tile + shape.tile / 16).fill(zero));
        runWorkgroup(entry, { x, y, z: 0 }, threads);
      }
    }
    if (data.length !== count) throw new Error(`${p.kind} pass stored beyond the block (index ${data.length - 1} >= n = ${count})`);
  }
  const out = new Uint32Array(2 * count);
  data.forEach((v, i) => {
    out[2 * i] = v.x;
    out[2 * i + 1] = v.y;
  });
  return out;
}

/**
 * Where two pair arrays first differ, as a readable message, or undefined when they are equal.
 * (vitest's toEqual on typed arrays of 10^5+ entries takes seconds; this takes microseconds.)
 */
export function pairsDiffer(actual: Uint32Array, expected: Uint32Array): string | undefined {
  if (actual.length !== expected.length) return `length ${actual.length} !== ${expected.length}`;
  for (let i = 0; i < actual.length; i++) {
    if (actual[i] !== expected[i]) {
      const p = i >> 1;
      const show = (a: Uint32Array) => `(${a[2 * p]}, ${a[2 * p + 1]})`;
      return `pair ${p}: ${show(actual)} !== expected ${show(expected)}`;
    }
  }
  return undefined;
}

/** The reference the GPU's output is checked against: the CPU sorter's output for `count` pairs (document bases applied first), as a fresh array. */
export function cpuSorted(pairs: Uint32Array, count: number, docBases?: Uint32Array): Uint32Array {
  const whole = pairs.slice(0, 2 * count);
  if (docBases) applyDocBases(whole, count, docBases);
  return radixSortPairs(whole, count, new Uint32Array(2 * count)).slice(0, 2 * count);
}

/** An independent reference (not the CPU radix sorter): the pairs sorted as 64-bit keys termID << 32 | docID by BigUint64Array. */
export function bigIntSorted(pairs: Uint32Array, count: number): Uint32Array {
  const keys = new BigUint64Array(count);
  for (let i = 0; i < count; i++) keys[i] = (BigInt(pairs[2 * i]!) << 32n) | BigInt(pairs[2 * i + 1]!);
  keys.sort();
  const out = new Uint32Array(2 * count);
  for (let i = 0; i < count; i++) {
    out[2 * i] = Number(keys[i]! >> 32n);
    out[2 * i + 1] = Number(keys[i]! & 0xffffffffn);
  }
  return out;
}

/**
 * What `sorter` makes of the first `count` pairs (document bases applied on the GPU first), as
 * a fresh array; throws if the sorter wrote into the caller's block (GPU sorters never may).
 */
export async function gpuSorted(sorter: Pick<PairSorter, 'sortBlock'>, pairs: Uint32Array, count: number, docBases?: Uint32Array): Promise<Uint32Array> {
  let out = new Uint32Array(0);
  const input = pairs.slice();
  await sorter.sortBlock(input, count, (sorted) => {
    out = sorted.slice();
  }, docBases);
  const written = pairsDiffer(input, pairs);
  if (written) throw new Error(`the sorter wrote into the host block: ${written}`);
  return out;
}

/** What `sorter` makes of `pairs` written straight into its staging buffer (the zero-copy upload), as a fresh array. */
export async function gpuSortedStaged(sorter: Pick<GpuSorter, 'stagingBlock' | 'sortBlock'>, pairs: Uint32Array, count: number): Promise<Uint32Array> {
  const view = await sorter.stagingBlock(count);
  view.set(pairs.subarray(0, 2 * count));
  let out = new Uint32Array(0);
  await sorter.sortBlock(view, count, (sorted) => {
    out = sorted.slice();
  });
  return out;
}

/** Every pair of a run file, in file order. */
export function readRunPairs(path: string): Uint32Array {
  const c = new RunCursor(path, 1 << 12);
  const out: number[] = [];
  for (; !c.done; c.advance()) out.push(c.termId, c.docId);
  return Uint32Array.from(out);
}
