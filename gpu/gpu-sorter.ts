/**
 * GpuSort(B) of Capannini, Silvestri and Baraglia, "Sorting on GPUs for large scale datasets: a
 * thorough comparison": sorts a block of (termID, docID) pairs in place in one GPU storage
 * buffer with the K-model bitonic network of bitonic-plan.ts.
 *
 * Memory: the block buffer (exactly n pairs), one MAP_WRITE staging buffer for the upload, one
 * MAP_READ buffer for the readback, and O(1) more (pass parameters, timestamps), plus the
 * document-base segments a pipeline block comes with (one per batch; doc-base-pass.ts). All of them
 * are reused from block to block and grow only when a larger block arrives.
 * The caller's consumer reads the sorted pairs straight from the mapped readback range.
 */
import type { DocBases, PairSorter, SortedConsumer, SortTiming, TermKeys } from '../src/shared/types.js';
import { DocBasePass } from './doc-base-pass.js';
import { nextPow2, planDispatches, planSort, type Dispatch, type SortPass } from './bitonic-plan.js';
import { closeGpu, isSoftwareAdapter, type GpuContext } from './device.js';
import { MapDelay } from './map-delay.js';
import { globalKernelSource, localKernelSource, tileBytes } from './kernel-source.js';

export interface GpuSorterOptions {
  /** Pairs per workgroup tile (power of two); default: the largest that fits workgroup memory, at most 4096. */
  tile?: number;
  /** Network steps per global pass (|Γ|), 1..6. Default 4. */
  maxSteps?: number;
  /**
   * Fused tile kernels: local_sort runs stages 2 .. 16 as one register phase, local_merge loads
   * its first phase straight from global memory (no tile copy-in). Default false (the kernels
   * measured on the H100 as v3).
   */
  fuse?: boolean;
  /** Radix sort: use subgroup operations where the adapter has them (default true; false: the shared-memory fallback everywhere). */
  subgroups?: boolean;
  /** Time every dispatch separately (benchmarks): fills SortTiming.byKind. */
  profile?: boolean;
  /** A readback not done after this many ms is a fault. Default 60 s + 1 s per 2^20 pairs. */
  readbackTimeoutMs?: number;
  /**
   * Test hook: rewrites each generated WGSL source before compilation (to simulate a driver
   * that rejects a kernel). Pipelines built through it are not shared with other sorters.
   */
  transformKernel?: (wgsl: string) => string;
}

export interface GpuSortTiming extends SortTiming {
  /** Dispatches of the sort (the network's passes; the radix sort's kernels, skipped ones too). */
  passes: number;
  /** Kernel milliseconds per pass kind (profile mode only). */
  byKind?: Record<string, number>;
  /** Radix sort, profile mode: the digit passes that ran (the others were skipped). */
  digitPasses?: number;
}

/** One dispatch of a sort: its pipeline, grid, uniforms (4 words) and kind (for profiles). */
export interface SortDispatch {
  pipeline: GPUComputePipeline;
  groups: [number, number];
  params: ArrayLike<number>;
  kind: string;
}

export const PARAM_BYTES = 16;
/** Layouts and compiled pipelines per device, shared by every sorter on it (later builds reuse them). */
const deviceCache = new WeakMap<GPUDevice, { layout: GPUBindGroupLayout; pipelineLayout: GPUPipelineLayout; pipelines: Map<string, GPUComputePipeline> }>();
const GLOBAL_GROUP = 256;
export const BYTES_PER_PAIR = 8;
/**
 * Each device's kernel compilations started by compileInBackground(), run one after another:
 * each brackets its pipelines with an error scope, and a device's scopes are one stack.
 */
const compileQueues = new WeakMap<GPUDevice, Promise<void>>();
/**
 * What compiling the kernels adds to the process's RSS, held for it in the memory plan while
 * they compile in the background (70-80 MiB on an H100, 85 MiB on lavapipe).
 */
export const KERNEL_COMPILE_BYTES = 128 * 1024 * 1024;

export class GpuSorter implements PairSorter {
  readonly kind = 'gpu' as const;
  /** The sorting algorithm: the K-model bitonic network here; subclasses name theirs. */
  readonly algorithm: string = 'bsn';
  readonly tile: number;
  readonly tileThreads: number;
  readonly maxSteps: number;
  readonly fuse: boolean;
  protected readonly device: GPUDevice;
  protected readonly layout: GPUBindGroupLayout;
  protected readonly pipelineLayout: GPUPipelineLayout;
  private readonly pipelines: Map<string, GPUComputePipeline>;
  protected readonly paramAlign: number;
  protected paramBuffer?: GPUBuffer;
  private paramSlots = 0;
  protected data?: GPUBuffer;
  private upload?: GPUBuffer;
  private readback?: GPUBuffer;
  private capacity = 0; // bytes of data/upload/readback
  private uploadReady: Promise<void> | undefined; // pending re-map of the staging buffer
  /** When to map the readback after a submit (map-delay.ts). */
  private readonly mapDelay = new MapDelay();
  private stagingView?: Uint32Array; // handed out by stagingBlock(), not yet sorted
  private querySet?: GPUQuerySet;
  private queryResolve?: GPUBuffer;
  private queryRead?: GPUBuffer;
  private querySlots = 0;
  private broken?: string;
  private disposed = false;
  /** compile() started by compileInBackground(): sorts wait for it, and fail with its error. */
  private compiling?: Promise<void>;
  /** Made by compile(), or by the first block that comes with document bases. */
  protected docBasePass?: DocBasePass;

  /**
   * Host memory per pair of block capacity: the MAP_WRITE staging and MAP_READ readback buffers
   * live in host memory; on a software adapter (lavapipe) the block buffer does too.
   */
  readonly hostBytesPerPair: number;

  constructor(readonly ctx: GpuContext, protected readonly options: GpuSorterOptions = {}) {
    this.device = ctx.device;
    this.hostBytesPerPair = BYTES_PER_PAIR * (isSoftwareAdapter(ctx.adapterInfo) ? 3 : 2);
    const l = ctx.limits;
    let fitting = 4096;
    while (fitting > 16 && tileBytes(fitting) > l.maxComputeWorkgroupStorageSize) fitting /= 2;
    this.tile = options.tile ?? fitting;
    if (this.tile < 16 || nextPow2(this.tile) !== this.tile || tileBytes(this.tile) > l.maxComputeWorkgroupStorageSize)
      throw new RangeError(`tile must be a power of two from 16 to ${fitting} pairs, got ${this.tile}`);
    // 16 pairs per invocation in the register phases.
    this.tileThreads = Math.min(this.tile / 16, l.maxComputeInvocationsPerWorkgroup, l.maxComputeWorkgroupSizeX);
    this.maxSteps = options.maxSteps ?? 4;
    this.fuse = options.fuse ?? false;
    if (!(this.maxSteps >= 1 && this.maxSteps <= 6)) throw new RangeError(`maxSteps must be 1..6, got ${this.maxSteps}`);
    this.paramAlign = Math.max(PARAM_BYTES, l.minUniformBufferOffsetAlignment);
    let cache = deviceCache.get(this.device);
    if (!cache) {
      const layout = this.device.createBindGroupLayout({
        entries: [
          { binding: 0, visibility: GPUShaderStage.COMPUTE, buffer: { type: 'storage' } },
          { binding: 1, visibility: GPUShaderStage.COMPUTE, buffer: { type: 'uniform', hasDynamicOffset: true, minBindingSize: PARAM_BYTES } },
        ],
      });
      cache = { layout, pipelineLayout: this.device.createPipelineLayout({ bindGroupLayouts: [layout] }), pipelines: new Map() };
      deviceCache.set(this.device, cache);
    }
    this.layout = cache.layout;
    this.pipelineLayout = cache.pipelineLayout;
    this.pipelines = options.transformKernel ? new Map() : cache.pipelines;
  }

  /** The largest block this device can sort (one storage binding). */
  get maxPairs(): number {
    return Math.floor(Math.min(this.ctx.limits.maxStorageBufferBindingSize, this.ctx.limits.maxBufferSize) / BYTES_PER_PAIR);
  }

  /** GPU memory held now: block buffer, staging, readback, parameters, queries. */
  get gpuBytes(): number {
    return 3 * this.capacity + (this.paramBuffer?.size ?? 0) + (this.queryResolve?.size ?? 0) + (this.queryRead?.size ?? 0) + (this.docBasePass?.gpuBytes ?? 0);
  }

  /**
   * GPU bytes the block-sized buffers take for a block of n pairs (block, staging, readback;
   * the smallest allocation is 2^13 pairs): what the memory of two sorters is compared by.
   */
  gpuBytesFor(n: number): number {
    return 3 * Math.min(this.maxPairs * BYTES_PER_PAIR, Math.max(n * BYTES_PER_PAIR, 1 << 16));
  }

  plan(n: number): SortPass[] {
    return planSort(n, this.tile, this.maxSteps);
  }

  private pipelineKey(pass: SortPass): string {
    return pass.kind === 'global' ? `global-${pass.m}-${pass.flip}` : `${pass.kind}-${this.tile}-${this.tileThreads}-${this.fuse ? 'fused' : 'plain'}`;
  }

  private pipelineDescriptor(pass: SortPass, key: string): GPUComputePipelineDescriptor {
    const generated = pass.kind === 'global' ? globalKernelSource(pass.m, pass.flip, GLOBAL_GROUP) : localKernelSource(this.tile, this.tileThreads, this.fuse);
    const code = this.options.transformKernel ? this.options.transformKernel(generated) : generated;
    const entryPoint = pass.kind === 'global' ? 'global_pass' : pass.kind === 'local-sort' ? 'local_sort' : 'local_merge';
    const module = this.device.createShaderModule({ code, label: key });
    return { layout: this.pipelineLayout, compute: { module, entryPoint }, label: key };
  }

  private pipeline(pass: SortPass): GPUComputePipeline {
    const key = this.pipelineKey(pass);
    let p = this.pipelines.get(key);
    if (p) return p;
    p = this.device.createComputePipeline(this.pipelineDescriptor(pass, key));
    this.pipelines.set(key, p);
    return p;
  }

  /**
   * Compiles every kernel now and reports WGSL errors as one exception (instead of at the first
   * sort). The pipelines are created asynchronously, all at once: Dawn compiles them on its worker
   * threads in parallel instead of one after another on this thread.
   */
  async compile(): Promise<void> {
    const kinds: SortPass[] = [{ kind: 'local-sort' }, { kind: 'local-merge', k: 0 }];
    for (let m = 1; m <= this.maxSteps; m++) for (const flip of [false, true]) kinds.push({ kind: 'global', k: 0, jHi: 0, m, flip });
    const missing = kinds.map((pass) => ({ pass, key: this.pipelineKey(pass) })).filter(({ key }) => !this.pipelines.has(key));
    this.device.pushErrorScope('validation');
    // The document-base pass too (small; compiled here so a driver's error shows up front).
    this.docBasePass ??= new DocBasePass(this.device);
    const created = await Promise.allSettled(missing.map(({ pass, key }) => this.device.createComputePipelineAsync(this.pipelineDescriptor(pass, key))));
    const err = await this.device.popErrorScope();
    const failed = created.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    // The error scope holds the shader module's own error (the pipelines' rejections only say
    // the module is invalid); either may span lines: the message is one line (it ends up in a warning).
    if (failed || err) {
      const reason = err?.message ?? (failed?.reason as Error | undefined)?.message ?? String(failed?.reason);
      throw new Error(`GPU kernel compilation failed: ${reason.replace(/\s*\n\s*/g, ' ').trim()}`);
    }
    created.forEach((r, i) => this.pipelines.set(missing[i]!.key, (r as PromiseFulfilledResult<GPUComputePipeline>).value));
  }

  /**
   * Starts compile() and returns: the device's limits, which the memory plan needs, are known
   * already, and the kernels compile while the build plans and parses (the bsn kernels: 0.28 s on an H100,
   * 1.25 s on a machine's first build). The first sort waits for them; a compile error fails it.
   */
  compileInBackground(): void {
    const before = compileQueues.get(this.device) ?? Promise.resolve();
    const compiling = before.then(() => (this.disposed ? undefined : this.compile()));
    compiling.catch(() => {}); // reported by the first sort
    compileQueues.set(this.device, compiling.catch(() => {}));
    this.compiling = compiling;
  }

  /**
   * Settles once no compilation queued on the device is pending (never rejects): Dawn aborts
   * the process if a thread ends while a pipeline is still being created.
   */
  async settled(): Promise<void> {
    await compileQueues.get(this.device);
  }

  /** Waits for every compilation queued on the device (none may overlap a sort's error scopes); rejects with this sorter's. */
  private async compiled(): Promise<void> {
    if (!this.compiling) return;
    await compileQueues.get(this.device);
    await this.compiling;
  }

  protected ensureCapacity(bytes: number): void {
    if (bytes <= this.capacity) return;
    this.destroyBlockBuffers();
    const size = Math.min(this.maxPairs * BYTES_PER_PAIR, Math.max(bytes, 1 << 16));
    if (this.stagingView) throw new Error('cannot grow the buffers while a staging block is outstanding');
    this.data = this.device.createBuffer({ size, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST, label: 'block' });
    this.upload = this.device.createBuffer({ size, usage: GPUBufferUsage.MAP_WRITE | GPUBufferUsage.COPY_SRC, mappedAtCreation: true, label: 'upload staging' });
    this.readback = this.device.createBuffer({ size, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST, label: 'readback' });
    this.uploadReady = undefined; // mapped at creation
    this.capacity = size;
  }

  private ensureParams(slots: number): void {
    if (slots <= this.paramSlots) return;
    this.paramBuffer?.destroy();
    this.paramSlots = Math.max(slots, 64);
    this.paramBuffer = this.device.createBuffer({ size: this.paramSlots * this.paramAlign, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST, label: 'pass params' });
  }

  private ensureQueries(slots: number): void {
    if (!this.ctx.hasTimestamps || slots <= this.querySlots) return;
    this.querySet?.destroy();
    this.queryResolve?.destroy();
    this.queryRead?.destroy();
    this.querySlots = Math.max(slots, 2);
    this.querySet = this.device.createQuerySet({ type: 'timestamp', count: this.querySlots });
    this.queryResolve = this.device.createBuffer({ size: 8 * this.querySlots, usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC });
    this.queryRead = this.device.createBuffer({ size: 8 * this.querySlots, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  }

  /**
   * Allocates the buffers for blocks of `pairs` now and says whether the device could: the
   * reason it could not (out of memory), or undefined. The buffers stay for the sorts.
   */
  async reserve(pairs: number): Promise<string | undefined> {
    this.device.pushErrorScope('out-of-memory');
    let thrown: unknown;
    try {
      this.ensureCapacity(Math.max(pairs, 1) * BYTES_PER_PAIR);
    } catch (err) {
      thrown = err; // a mapped-at-creation buffer that cannot be allocated throws a RangeError
    }
    const err = await this.device.popErrorScope();
    if (!err && thrown === undefined) return undefined;
    this.destroyBlockBuffers();
    return (err?.message ?? (thrown as Error)?.message ?? String(thrown)).replace(/\s*\n\s*/g, ' ').trim();
  }

  /** The dispatches (pass, grid, uniforms) that sort n pairs on this sorter's kernels. */
  dispatchPlan(n: number): Dispatch[] {
    return planDispatches(n, {
      tile: this.tile,
      tileThreads: this.tileThreads,
      maxSteps: this.maxSteps,
      globalGroup: GLOBAL_GROUP,
      maxGroupsPerDimension: this.ctx.limits.maxComputeWorkgroupsPerDimension,
    });
  }

  /**
   * Zero-copy upload: a view of the mapped staging buffer with room for `count` pairs. A
   * producer that fills it and passes it to sortBlock() saves the host copy of the upload (the
   * GPU then reads the block straight from the staging buffer). Invalid once sortBlock() starts.
   */
  async stagingBlock(count: number): Promise<Uint32Array> {
    if (this.disposed) throw new Error('GpuSorter used after dispose()');
    await this.compiled();
    this.ensureCapacity(Math.max(count, 1) * BYTES_PER_PAIR);
    if (this.uploadReady) await this.uploadReady;
    this.uploadReady = undefined;
    this.stagingView = new Uint32Array(this.upload!.getMappedRange(0, Math.max(count, 1) * BYTES_PER_PAIR));
    return this.stagingView;
  }

  async sortBlock(pairs: Uint32Array, count: number, consume: SortedConsumer, docBases?: DocBases, termKeys?: TermKeys): Promise<GpuSortTiming> {
    if (this.disposed) throw new Error('GpuSorter used after dispose()');
    if (this.broken) throw new Error(this.broken);
    if (this.ctx.fault) throw new Error(this.ctx.fault);
    await this.compiled();
    const t0 = performance.now();
    if (count > this.maxPairs) throw new RangeError(`block of ${count} pairs exceeds the GPU's binding limit of ${this.maxPairs} pairs`);
    const bytes = Math.max(count, 1) * BYTES_PER_PAIR;
    if (count === 0) {
      if (this.stagingView && pairs.buffer === this.stagingView.buffer) {
        // Give the staging block back: unmap and map it again for the next upload.
        this.stagingView = undefined;
        this.upload!.unmap();
        this.uploadReady = this.remapUpload();
      }
      await consume(new Uint32Array(0));
      return { totalMs: 0, passes: 0 };
    }
    if (!(this.stagingView && pairs.buffer === this.stagingView.buffer)) this.ensureCapacity(bytes);
    else if (count * BYTES_PER_PAIR > this.stagingView.byteLength) throw new RangeError(`the staging block holds ${this.stagingView.length / 2} pairs, not ${count}`);
    const profile = this.options.profile === true && this.ctx.hasTimestamps;
    const plan = this.sortDispatches(count);
    this.ensureParams(Math.max(1, plan.length));
    this.ensureQueries(profile ? 2 * plan.length : 2);

    // Upload: copy into the reused MAP_WRITE staging buffer (mapped since the last sort finished),
    // unless the producer wrote the block there already (stagingBlock()).
    const zeroCopy = this.stagingView !== undefined && pairs.buffer === this.stagingView.buffer;
    if (!zeroCopy && this.stagingView) throw new Error('a staging block is outstanding: sort it before other blocks');
    if (!zeroCopy) {
      if (this.uploadReady) await this.uploadReady;
      new Uint32Array(this.upload!.getMappedRange(0, bytes)).set(pairs.subarray(0, 2 * count));
    }
    this.stagingView = undefined;
    this.upload!.unmap();
    const tUploaded = performance.now();

    // Parameters of every pass in one small write.
    const params = new Uint32Array((Math.max(1, plan.length) * this.paramAlign) / 4);
    const dispatches = plan.map((d, slot) => {
      params.set(d.params, (slot * this.paramAlign) / 4);
      return { ...d, slot };
    });
    this.device.queue.writeBuffer(this.paramBuffer!, 0, params);

    const bindGroup = this.sortBindGroup(count);
    const enc = this.device.createCommandEncoder();
    enc.copyBufferToBuffer(this.upload!, 0, this.data!, 0, bytes);
    if ((docBases && docBases.length > 0) || termKeys) (this.docBasePass ??= new DocBasePass(this.device)).encode(enc, this.data!, count, docBases, termKeys);
    const runPass = (list: typeof dispatches, q?: number) => {
      const pass = enc.beginComputePass(
        this.querySet && q !== undefined ? { timestampWrites: { querySet: this.querySet, beginningOfPassWriteIndex: q, endOfPassWriteIndex: q + 1 } } : {},
      );
      for (const d of list) {
        pass.setPipeline(d.pipeline);
        pass.setBindGroup(0, bindGroup, [d.slot * this.paramAlign]);
        pass.dispatchWorkgroups(d.groups[0], d.groups[1]);
      }
      pass.end();
    };
    if (profile) dispatches.forEach((d, i) => runPass([d], 2 * i));
    else runPass(dispatches, this.querySet ? 0 : undefined);
    const queries = profile ? 2 * dispatches.length : this.querySet ? 2 : 0;
    if (queries) {
      enc.resolveQuerySet(this.querySet!, 0, queries, this.queryResolve!, 0);
      enc.copyBufferToBuffer(this.queryResolve!, 0, this.queryRead!, 0, 8 * queries);
    }
    enc.copyBufferToBuffer(this.data!, 0, this.readback!, 0, bytes);
    this.encodeAfterSort(enc, profile);
    this.device.queue.submit([enc.finish()]);
    const tSubmitted = performance.now();
    // A pending map keeps dawn.node busy-polling the device (map-delay.ts): the readback is
    // mapped when the GPU should be nearly done, and the staging buffer only once the readback
    // is mapped (the GPU is then done with both).
    const delayMs = this.mapDelay.delayMs(count);
    if (delayMs >= 1) await new Promise((resolve) => setTimeout(resolve, delayMs));
    await this.withTimeout(this.readback!.mapAsync(GPUMapMode.READ, 0, bytes), count);
    const tMapped = performance.now();
    this.uploadReady = this.remapUpload();
    this.mapDelay.learn(count, tMapped - tSubmitted);
    let kernelMs: number | undefined;
    let byKind: GpuSortTiming['byKind'];
    if (queries) {
      await this.queryRead!.mapAsync(GPUMapMode.READ, 0, 8 * queries);
      const ts = new BigUint64Array(this.queryRead!.getMappedRange(0, 8 * queries));
      if (profile) {
        byKind = {};
        kernelMs = 0;
        dispatches.forEach((d, i) => {
          const ms = Number(ts[2 * i + 1]! - ts[2 * i]!) / 1e6;
          byKind![d.kind] = (byKind![d.kind] ?? 0) + ms;
          kernelMs! += ms;
        });
      } else kernelMs = Number(ts[1]! - ts[0]!) / 1e6;
      this.queryRead!.unmap();
    }
    const extra = await this.readAfterSort(profile);
    try {
      await consume(new Uint32Array(this.readback!.getMappedRange(0, bytes)));
    } finally {
      this.readback!.unmap();
    }
    const gpuWallMs = tMapped - tSubmitted;
    return {
      totalMs: performance.now() - t0,
      uploadMs: tUploaded - t0,
      kernelMs,
      readbackMs: kernelMs !== undefined ? Math.max(0, gpuWallMs - kernelMs) : gpuWallMs,
      passes: dispatches.length,
      byKind,
      ...extra,
    };
  }

  /** The dispatches that sort `count` pairs of the block buffer (here: the network's passes). */
  protected sortDispatches(count: number): SortDispatch[] {
    return this.dispatchPlan(count).map((d) => ({ pipeline: this.pipeline(d.pass), groups: d.groups, params: d.params, kind: d.pass.kind }));
  }

  /** The bind group of every dispatch (its uniforms at a dynamic offset); called after the parameter buffer is sized. */
  protected sortBindGroup(count: number): GPUBindGroup {
    return this.device.createBindGroup({
      layout: this.layout,
      entries: [
        { binding: 0, resource: { buffer: this.data!, offset: 0, size: Math.max(count, 1) * BYTES_PER_PAIR } },
        { binding: 1, resource: { buffer: this.paramBuffer!, offset: 0, size: PARAM_BYTES } },
      ],
    });
  }

  /** Commands after the readback copy, in the same submission (none here). */
  protected encodeAfterSort(_enc: GPUCommandEncoder, _profile: boolean): void {}

  /** Timing fields read once the readback is mapped (none here). */
  protected async readAfterSort(_profile: boolean): Promise<Partial<GpuSortTiming>> {
    return {};
  }

  /**
   * Maps the staging buffer for the next block. The promise is awaited only by the next sort;
   * if the sorter is disposed first (buffers destroyed: the map is aborted) nobody awaits it, so
   * its rejection is marked handled here.
   */
  private remapUpload(): Promise<void> {
    const p = this.upload!.mapAsync(GPUMapMode.WRITE);
    p.catch(() => {});
    return p;
  }

  private async withTimeout(p: Promise<void>, count: number): Promise<void> {
    const ms = this.options.readbackTimeoutMs ?? 60_000 + (count / 2 ** 20) * 1000;
    let timer: NodeJS.Timeout | undefined;
    try {
      // A limit of 0 fails every readback, whichever of the map and a 0 ms timer lands first.
      // (The abandoned map may still settle, even as a rejection once the device is destroyed.)
      p.catch(() => {});
      if (ms <= 0) throw new Error('GPU readback did not finish within 0 ms');
      await Promise.race([
        p,
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`GPU readback did not finish within ${Math.round(ms)} ms`)), ms);
        }),
      ]);
    } catch (err) {
      this.broken = (err as Error).message;
      throw err;
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Frees the block-sized buffers (block, staging, readback) now, at the end of a build's parse,
   * before the merge allocates its own; a later sort allocates them again.
   */
  async release(): Promise<void> {
    if (this.stagingView) throw new Error('cannot release the buffers while a staging block is outstanding');
    this.destroyBlockBuffers();
    this.uploadReady = undefined;
  }

  protected destroyBlockBuffers(): void {
    for (const b of [this.data, this.upload, this.readback]) b?.destroy();
    this.data = this.upload = this.readback = undefined;
    this.capacity = 0;
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    try {
      this.destroyBlockBuffers();
      this.paramBuffer?.destroy();
      this.docBasePass?.dispose();
      this.querySet?.destroy();
      this.queryResolve?.destroy();
      this.queryRead?.destroy();
    } finally {
      closeGpu();
    }
  }
}
