/**
 * The adaptive bitonic sort of Bilardi and Nicolau ("Adaptive bitonic sorting: an optimal
 * parallel algorithm for shared-memory machines") on WebGPU, in the stream form of Greß and
 * Zachmann ("GPU-ABiSort: optimal parallel sorting on stream architectures"); kernels in
 * kernels/adaptive.wgsl. Where the bitonic network runs n/2 compare-exchanges at every step of a
 * merge, the adaptive merge finds the split of each bitonic sequence by walking its bitonic tree
 * and exchanges whole subsequences by swapping child pointers: O(n) work a merge level,
 * O(n log n) in all, against the network's O(n log² n).
 *
 * Passes for a block of n pairs, N = n padded to a power of two, tiles of T pairs, subtrees of
 * 2^s nodes finished by one workgroup each: the bitonic network's tile sort (kernels/local.wgsl,
 * every tile ascending), one pass that makes the tiles bitonic trees (odd tiles reversed); for
 * each level j = log2 T + 1 .. log2 N, j - s global stages and one workgroup pass; one in-order
 * traversal that writes the block back (adaptivePlan()). A block of one tile: the tile sort only.
 *
 * Memory: beside everything GpuSorter holds (block buffer, staging, readback), the bitonic
 * trees: 12 bytes a node for its value and id, 8 bytes per odd node for its children, 8 bytes
 * per 2^s nodes for the instances' node pointers: 16 N + 8 N / 2^s bytes (adaptiveExtraBytes()),
 * so 2 to 4 times the block's 8 n bytes.
 *
 * Same interface as GpuSorter (upload, zero-copy staging, document bases and term keys on the
 * GPU, readback, timing); only the kernels differ.
 */
import { readFileSync } from 'node:fs';
import { assetUrl } from '../runtime/assets.js';
import { DocBasePass } from './doc-base-pass.js';
import { log2, nextPow2 } from './bitonic-plan.js';
import { isSoftwareAdapter, type GpuContext } from './device.js';
import { localKernelSource } from './kernel-source.js';
import { BYTES_PER_PAIR, GpuSorter, PARAM_BYTES, type GpuSorterOptions, type SortDispatch } from './gpu-sorter.js';

/** Invocations per workgroup of the global stages and the traversal. */
const GROUP = 256;
/** The largest subtree (log2 of its nodes) one workgroup finishes: 2^(9-1) = 256 instances in its last stage. */
const MAX_LOCAL_LOG = 9;
/**
 * Invocations of the workgroup pass: its stages have 1, 2, 4, ... 2^(s-1) instances, so more
 * invocations would mostly wait at the barriers; each takes several instances in the last stages,
 * whose walks are the shortest.
 */
const LOCAL_THREADS = 64;
/** Levels of the subtree one traversal invocation writes (15 nodes, then its successor). */
const TRAV_H = 4;
/** Bytes a tree node takes: value and id (12), children (8 per odd node: 4 a node). */
const NODE_BYTES = 16;

/** Kernels of adaptive.wgsl, and the bitonic network's tile sort (kernels/local.wgsl). */
const ENTRY_POINTS = ['ab_nodes', 'ab_merge_stage', 'ab_merge_local', 'ab_traverse'] as const;
type EntryPoint = (typeof ENTRY_POINTS)[number] | 'local_sort';

const cache = new WeakMap<GPUDevice, Map<string, { layout: GPUBindGroupLayout; pipelines: Record<EntryPoint, GPUComputePipeline> }>>();

/** One dispatch of the plan: which kernel, the merge level and stage, and how many invocations work. */
export interface AdaptiveStep {
  kind: 'local-sort' | 'nodes' | 'merge-stage' | 'merge-local' | 'traverse';
  /** Merge level (log2 of the runs it makes); stage within it (merge-stage: its k; merge-local: the first it runs). */
  level: number;
  stage: number;
  /** Tiles (local-sort), nodes (nodes), La/Ua instances (merge-stage), subtrees (merge-local), traversal invocations. */
  units: number;
}

/** The dispatches that sort n pairs with tiles of `tile` pairs and subtrees of 2^localLog nodes finished in a workgroup. */
export function adaptivePlan(n: number, tile: number, localLog: number): AdaptiveStep[] {
  if (n <= 1) return [];
  const N = nextPow2(n);
  const L = log2(N);
  const t = log2(tile);
  const out: AdaptiveStep[] = [{ kind: 'local-sort', level: t, stage: 0, units: Math.ceil(n / tile) }];
  if (N <= tile) return out;
  out.push({ kind: 'nodes', level: t, stage: 0, units: N });
  for (let j = t + 1; j <= L; j++) {
    const firstLocal = Math.max(0, j - localLog);
    for (let k = 0; k < firstLocal; k++) out.push({ kind: 'merge-stage', level: j, stage: k, units: N / 2 ** (j - k) });
    out.push({ kind: 'merge-local', level: j, stage: firstLocal, units: N / 2 ** (j - firstLocal) });
  }
  out.push({ kind: 'traverse', level: L, stage: 0, units: N / 2 ** TRAV_H });
  return out;
}

/**
 * La/Ua phases the plan runs in all (one phase: one compare of a node pair, maybe a value and
 * pointer swap): the adaptive merge's work. Level j's stage k runs N / 2^(j-k) constructions of
 * j - k phases each, under 2N a level.
 */
export function adaptivePhases(n: number, tile: number): number {
  if (n <= 1 || nextPow2(n) <= tile) return 0;
  const N = nextPow2(n);
  let phases = 0;
  for (let j = log2(tile) + 1; j <= log2(N); j++) for (let k = 0; k < j; k++) phases += (N / 2 ** (j - k)) * (j - k);
  return phases;
}

/** GPU bytes of the bitonic trees for a block of `pairs` (values and ids, children, instance pointers). */
export function adaptiveExtraBytes(pairs: number, localLog = MAX_LOCAL_LOG): number {
  const N = nextPow2(Math.max(pairs, 1));
  return NODE_BYTES * N + BYTES_PER_PAIR * Math.max(1, N / 2 ** localLog);
}

export class AdaptiveSorter extends GpuSorter {
  override readonly algorithm = 'adaptive';
  /** log2 of the subtrees (nodes) a workgroup finishes: at most 9, at most log2 of the tile. */
  readonly localLog: number;
  /** GpuSorter's, plus (on a software adapter, whose GPU memory is host memory) the trees: N < 2n nodes. */
  override readonly hostBytesPerPair: number;
  private layoutA?: GPUBindGroupLayout;
  private pipelinesA?: Record<EntryPoint, GPUComputePipeline>;
  private vals?: GPUBuffer;
  private kids?: GPUBuffer;
  private stream?: GPUBuffer;

  constructor(ctx: GpuContext, options: GpuSorterOptions = {}) {
    super(ctx, options);
    this.localLog = Math.min(MAX_LOCAL_LOG, log2(this.tile));
    const software = isSoftwareAdapter(ctx.adapterInfo);
    this.hostBytesPerPair = BYTES_PER_PAIR * (software ? 3 : 2) + (software ? 2 * NODE_BYTES + 1 : 0);
  }

  /** The largest block: its trees, N = 2^k nodes of 12 bytes, must fit one storage binding. */
  override get maxPairs(): number {
    const limit = Math.min(this.ctx.limits.maxStorageBufferBindingSize, this.ctx.limits.maxBufferSize);
    return Math.min(super.maxPairs, 2 ** Math.floor(Math.log2(limit / 12)));
  }

  /** The kernels' WGSL (kernels/adaptive.wgsl with its constants). */
  source(): string {
    const values: Record<string, number> = {
      TILE: this.tile,
      LOG_TILE: log2(this.tile),
      LOCAL_LOG: this.localLog,
      LOCAL_THREADS: Math.min(LOCAL_THREADS, 2 ** (this.localLog - 1)),
      LOCAL_SLOTS: 2 ** (this.localLog - 1),
      GROUP,
      TRAV_H,
    };
    const text = readFileSync(assetUrl('gpu/kernels/adaptive.wgsl'), 'utf8').replace(/\{\{(\w+)\}\}/g, (_, k: string) => String(values[k]));
    return this.options.transformKernel ? this.options.transformKernel(text) : text;
  }

  override async compile(): Promise<void> {
    if (this.pipelinesA) return;
    const shared = !this.options.transformKernel;
    const key = `${this.tile}-${this.tileThreads}-${this.localLog}-${LOCAL_THREADS}`;
    const cached = shared ? cache.get(this.device)?.get(key) : undefined;
    this.docBasePass ??= new DocBasePass(this.device);
    if (cached) {
      this.layoutA = cached.layout;
      this.pipelinesA = cached.pipelines;
      return;
    }
    this.device.pushErrorScope('validation');
    const storage = (binding: number): GPUBindGroupLayoutEntry => ({ binding, visibility: GPUShaderStage.COMPUTE, buffer: { type: 'storage' } });
    const layout = this.device.createBindGroupLayout({
      entries: [storage(0), { binding: 1, visibility: GPUShaderStage.COMPUTE, buffer: { type: 'uniform', hasDynamicOffset: true, minBindingSize: PARAM_BYTES } }, storage(2), storage(3), storage(4)],
    });
    const pipelineLayout = this.device.createPipelineLayout({ bindGroupLayouts: [layout] });
    const module = this.device.createShaderModule({ code: this.source(), label: 'adaptive' });
    // The network's tile sort, with this layout (it binds only the block and the uniforms, as 0 and 1 here).
    const network = localKernelSource(this.tile, this.tileThreads);
    const tileModule = this.device.createShaderModule({ code: this.options.transformKernel ? this.options.transformKernel(network) : network, label: 'adaptive tile sort' });
    const entries: [GPUShaderModule, EntryPoint][] = [[tileModule, 'local_sort'], ...ENTRY_POINTS.map((e): [GPUShaderModule, EntryPoint] => [module, e])];
    const created = await Promise.allSettled(
      entries.map(([m, entryPoint]) => this.device.createComputePipelineAsync({ layout: pipelineLayout, compute: { module: m, entryPoint }, label: `adaptive ${entryPoint}` })),
    );
    const err = await this.device.popErrorScope();
    const failed = created.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed || err) {
      const reason = err?.message ?? (failed?.reason as Error | undefined)?.message ?? String(failed?.reason);
      throw new Error(`GPU kernel compilation failed: ${reason.replace(/\s*\n\s*/g, ' ').trim()}`);
    }
    const pipelines = Object.fromEntries(entries.map(([, e], i) => [e, (created[i] as PromiseFulfilledResult<GPUComputePipeline>).value])) as Record<EntryPoint, GPUComputePipeline>;
    this.layoutA = layout;
    this.pipelinesA = pipelines;
    if (shared) {
      let perDevice = cache.get(this.device);
      if (!perDevice) cache.set(this.device, (perDevice = new Map()));
      perDevice.set(key, { layout, pipelines });
    }
  }

  protected override ensureCapacity(bytes: number): void {
    super.ensureCapacity(bytes);
    const N = nextPow2(this.data!.size / BYTES_PER_PAIR);
    if (this.vals && this.vals.size === 12 * N) return;
    this.destroyTrees();
    this.vals = this.device.createBuffer({ size: 12 * N, usage: GPUBufferUsage.STORAGE, label: 'adaptive node values' });
    this.kids = this.device.createBuffer({ size: 4 * N, usage: GPUBufferUsage.STORAGE, label: 'adaptive node children' });
    this.stream = this.device.createBuffer({ size: BYTES_PER_PAIR * Math.max(1, N / 2 ** this.localLog), usage: GPUBufferUsage.STORAGE, label: 'adaptive instance pointers' });
  }

  private destroyTrees(): void {
    for (const b of [this.vals, this.kids, this.stream]) b?.destroy();
    this.vals = this.kids = this.stream = undefined;
  }

  protected override destroyBlockBuffers(): void {
    super.destroyBlockBuffers();
    this.destroyTrees();
  }

  override get gpuBytes(): number {
    return super.gpuBytes + (this.vals?.size ?? 0) + (this.kids?.size ?? 0) + (this.stream?.size ?? 0);
  }

  /** The network's block buffers plus the trees (sized, like the block buffers, for at least 2^13 pairs). */
  override gpuBytesFor(n: number): number {
    return super.gpuBytesFor(n) + adaptiveExtraBytes(Math.max(n, 1 << 13), this.localLog);
  }

  /** The dispatches of adaptivePlan() for this sorter's tile and subtrees. */
  adaptiveSteps(n: number): AdaptiveStep[] {
    return adaptivePlan(n, this.tile, this.localLog);
  }

  private grid(groups: number): [number, number] {
    const x = Math.min(groups, this.ctx.limits.maxComputeWorkgroupsPerDimension);
    return [x, Math.ceil(groups / x)];
  }

  protected override sortDispatches(count: number): SortDispatch[] {
    if (!this.pipelinesA) throw new Error('AdaptiveSorter: compile() first');
    const p = this.pipelinesA;
    const logN = log2(nextPow2(Math.max(count, 1)));
    return this.adaptiveSteps(count).map((s) => {
      if (s.kind === 'local-sort') {
        // the network's Params: n, working invocations, logS (unused), workgroups along x
        const tiles = this.grid(s.units);
        return { pipeline: p.local_sort, groups: tiles, params: [count, s.units * this.tileThreads, 0, tiles[0]], kind: s.kind };
      }
      const perUnit = s.kind !== 'merge-local'; // one invocation per unit, GROUP a workgroup; merge-local: a workgroup per subtree
      const groups = this.grid(perUnit ? Math.ceil(s.units / GROUP) : s.units);
      const pipeline = s.kind === 'nodes' ? p.ab_nodes : s.kind === 'merge-stage' ? p.ab_merge_stage : s.kind === 'merge-local' ? p.ab_merge_local : p.ab_traverse;
      return { pipeline, groups, params: [count, logN | (s.level << 8) | (s.stage << 16), s.units, groups[0]], kind: s.kind };
    });
  }

  protected override sortBindGroup(count: number): GPUBindGroup {
    return this.device.createBindGroup({
      layout: this.layoutA!,
      entries: [
        { binding: 0, resource: { buffer: this.data!, offset: 0, size: Math.max(count, 1) * BYTES_PER_PAIR } },
        { binding: 1, resource: { buffer: this.paramBuffer!, offset: 0, size: PARAM_BYTES } },
        { binding: 2, resource: { buffer: this.vals! } },
        { binding: 3, resource: { buffer: this.kids! } },
        { binding: 4, resource: { buffer: this.stream! } },
      ],
    });
  }
}
