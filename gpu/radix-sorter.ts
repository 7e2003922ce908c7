/**
 * GPU LSD radix sort of a block of (termID, docID) pairs as 64-bit keys, the alternative to the
 * bitonic network that Merrill and Grimshaw, "Revisiting sorting for GPGPU stream
 * architectures", weigh it against: 8 bits per digit pass, each pass a reduce-then-scan
 * (upsweep, scan, downsweep; kernels/radix.wgsl). Digit passes over key bits that are equal in
 * the whole block are skipped, and so are the docID digits when the docIDs already ascend in
 * block order (a block filled batch by batch): a first kernel takes the OR and AND of both
 * words and looks for a descent, and every later kernel reads its decision from there, so the
 * host never waits for it.
 *
 * Memory: out of place. Beside everything GpuSorter holds (block buffer, staging, readback),
 * a second block-sized buffer (8 bytes a pair) and the tile counts (256 words a tile of
 * 256 × KPT pairs: 0.5 bytes a pair at KPT = 8), against the network's Θ(1) extra.
 *
 * Same interface as GpuSorter (upload, zero-copy staging, document bases and term keys on the
 * GPU, readback, timing); only the kernels differ.
 */
import { readFileSync } from 'node:fs';
import { assetUrl } from '../runtime/assets.js';
import { DocBasePass } from './doc-base-pass.js';
import { isSoftwareAdapter, type GpuContext } from './device.js';
import { BYTES_PER_PAIR, GpuSorter, PARAM_BYTES, type GpuSorterOptions, type GpuSortTiming, type SortDispatch } from './gpu-sorter.js';

/** Invocations per workgroup; also the bins of an 8-bit digit. */
const WG = 256;
/** Workgroups of the grid-stride kernels (stats, copy-back). */
const STATS_GROUPS = 1024;
const DIGITS = 8;
const STATS_WORDS = 5;
const STATS_INIT = new Uint32Array([0, 0xffffffff, 0, 0xffffffff, 0]);

/** Shared memory of the downsweep: the tile (or the counters), the scan scratch, bases, starts (4 bytes each). */
const downsweepBytes = (kpt: number): number => 4 * (Math.max(2 * WG * kpt, 8 * WG) + 3 * WG) + 4 * (WG + STATS_WORDS + 1);

/** Keys per invocation: 8 where the tile fits the workgroup memory, else 4 (16 KiB, WebGPU's default). */
export function radixKeysPerThread(maxWorkgroupBytes: number): number {
  for (const kpt of [8, 4, 2]) if (downsweepBytes(kpt) <= maxWorkgroupBytes) return kpt;
  throw new RangeError(`the radix sort needs ${downsweepBytes(2)} bytes of workgroup memory, the device offers ${maxWorkgroupBytes}`);
}

/** Extra GPU bytes the radix sort holds beyond the network for a block of `pairs` (second buffer, tile counts). */
export function radixExtraBytes(pairs: number, keysPerThread = 8): number {
  const tiles = Math.ceil(Math.max(pairs, 1) / (WG * keysPerThread));
  return Math.max(pairs, 1) * BYTES_PER_PAIR + 4 * (WG * tiles + WG);
}

const cache = new WeakMap<GPUDevice, Map<string, { layout: GPUBindGroupLayout; pipelines: Record<string, GPUComputePipeline> }>>();
/**
 * The stats kernel's workgroup reduction, two ways. OR and AND do not depend on the order of
 * the invocations, so subgroup operations can take them where the adapter has them (one shared
 * atomic per subgroup instead of one per invocation). The order-dependent scans of the other
 * kernels use shared memory everywhere: WGSL does not say which invocations form a subgroup.
 */
const STATS_REDUCE_WORKGROUP = `  atomicOr(&red[0], orT);
  atomicAnd(&red[1], andT);
  atomicOr(&red[2], orD);
  atomicAnd(&red[3], andD);
  atomicOr(&red[4], descents);`;
const STATS_REDUCE_SUBGROUPS = `  let sOrT = subgroupOr(orT);
  let sAndT = subgroupAnd(andT);
  let sOrD = subgroupOr(orD);
  let sAndD = subgroupAnd(andD);
  let sDescents = subgroupOr(descents);
  if (subgroupElect()) {
    atomicOr(&red[0], sOrT);
    atomicAnd(&red[1], sAndT);
    atomicOr(&red[2], sOrD);
    atomicAnd(&red[3], sAndD);
    atomicOr(&red[4], sDescents);
  }`;

const ENTRY_POINTS = ['stats_pass', 'upsweep', 'scan_counts', 'downsweep', 'copy_back'] as const;

export class RadixSorter extends GpuSorter {
  override readonly algorithm = 'radix';
  /** Keys per invocation in a tile, and the tile (pairs per upsweep / downsweep workgroup). */
  readonly keysPerThread: number;
  readonly radixTile: number;
  /** The stats reduction uses subgroup operations (the adapter has them and they were not turned off). */
  readonly subgroups: boolean;
  /** GpuSorter's, plus (on a software adapter, whose GPU memory is host memory) the second block and the counts. */
  override readonly hostBytesPerPair: number;
  private layoutR?: GPUBindGroupLayout;
  private pipelinesR?: Record<string, GPUComputePipeline>;
  private alt?: GPUBuffer; // the second block buffer
  private counts?: GPUBuffer;
  private readonly stats: GPUBuffer;
  private statsRead?: GPUBuffer;

  constructor(ctx: GpuContext, options: GpuSorterOptions = {}) {
    super(ctx, options);
    this.keysPerThread = radixKeysPerThread(ctx.limits.maxComputeWorkgroupStorageSize);
    this.radixTile = WG * this.keysPerThread;
    this.subgroups = ctx.hasSubgroups && options.subgroups !== false;
    const software = isSoftwareAdapter(ctx.adapterInfo);
    this.hostBytesPerPair = BYTES_PER_PAIR * (software ? 3 : 2) + (software ? BYTES_PER_PAIR + Math.ceil(4 / this.keysPerThread) : 0);
    this.stats = this.device.createBuffer({ size: 4 * 8, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC, label: 'radix stats' });
  }

  /** The kernels' WGSL (kernels/radix.wgsl with its constants). */
  source(): string {
    const text = readFileSync(assetUrl('gpu/kernels/radix.wgsl'), 'utf8');
    const values: Record<string, string | number> = {
      WG,
      KPT: this.keysPerThread,
      TILE: this.radixTile,
      SMEM: Math.max(2 * this.radixTile, 8 * WG),
      STATS_GROUPS,
      ENABLE: this.subgroups ? 'enable subgroups;' : '',
      STATS_REDUCE: this.subgroups ? STATS_REDUCE_SUBGROUPS : STATS_REDUCE_WORKGROUP,
    };
    const filled = text.replace(/\{\{(\w+)\}\}/g, (_, k: string) => String(values[k]));
    return this.options.transformKernel ? this.options.transformKernel(filled) : filled;
  }

  override async compile(): Promise<void> {
    if (this.pipelinesR) return;
    const shared = !this.options.transformKernel;
    const variant = `${this.keysPerThread}-${this.subgroups ? 'subgroups' : 'workgroup'}`;
    const cached = shared ? cache.get(this.device)?.get(variant) : undefined;
    if (cached) {
      this.layoutR = cached.layout;
      this.pipelinesR = cached.pipelines;
      this.docBasePass ??= new DocBasePass(this.device);
      return;
    }
    this.device.pushErrorScope('validation');
    this.docBasePass ??= new DocBasePass(this.device);
    const storage = (binding: number): GPUBindGroupLayoutEntry => ({ binding, visibility: GPUShaderStage.COMPUTE, buffer: { type: 'storage' } });
    const layout = this.device.createBindGroupLayout({
      entries: [storage(0), storage(1), storage(2), storage(3), { binding: 4, visibility: GPUShaderStage.COMPUTE, buffer: { type: 'uniform', hasDynamicOffset: true, minBindingSize: PARAM_BYTES } }],
    });
    const pipelineLayout = this.device.createPipelineLayout({ bindGroupLayouts: [layout] });
    const module = this.device.createShaderModule({ code: this.source(), label: 'radix' });
    const created = await Promise.allSettled(
      ENTRY_POINTS.map((entryPoint) => this.device.createComputePipelineAsync({ layout: pipelineLayout, compute: { module, entryPoint }, label: `radix ${entryPoint}` })),
    );
    const err = await this.device.popErrorScope();
    const failed = created.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed || err) {
      const reason = err?.message ?? (failed?.reason as Error | undefined)?.message ?? String(failed?.reason);
      throw new Error(`GPU kernel compilation failed: ${reason.replace(/\s*\n\s*/g, ' ').trim()}`);
    }
    const pipelines = Object.fromEntries(ENTRY_POINTS.map((e, i) => [e, (created[i] as PromiseFulfilledResult<GPUComputePipeline>).value]));
    this.layoutR = layout;
    this.pipelinesR = pipelines;
    if (shared) {
      let perDevice = cache.get(this.device);
      if (!perDevice) cache.set(this.device, (perDevice = new Map()));
      perDevice.set(variant, { layout, pipelines });
    }
  }

  protected override ensureCapacity(bytes: number): void {
    super.ensureCapacity(bytes);
    const size = this.data!.size;
    if (this.alt && this.alt.size === size) return;
    this.alt?.destroy();
    this.counts?.destroy();
    const pairs = size / BYTES_PER_PAIR;
    this.alt = this.device.createBuffer({ size, usage: GPUBufferUsage.STORAGE, label: 'radix second block' });
    this.counts = this.device.createBuffer({ size: radixExtraBytes(pairs, this.keysPerThread) - pairs * BYTES_PER_PAIR, usage: GPUBufferUsage.STORAGE, label: 'radix tile counts' });
  }

  protected override destroyBlockBuffers(): void {
    super.destroyBlockBuffers();
    this.alt?.destroy();
    this.counts?.destroy();
    this.alt = this.counts = undefined;
  }

  override get gpuBytes(): number {
    return super.gpuBytes + (this.alt?.size ?? 0) + (this.counts?.size ?? 0) + this.stats.size + (this.statsRead?.size ?? 0);
  }

  /** The network's block buffers plus the second block buffer and the tile counts. */
  override gpuBytesFor(n: number): number {
    return super.gpuBytesFor(n) + radixExtraBytes(Math.max(n, 1 << 13), this.keysPerThread);
  }

  /** Tiles of a block of `count` pairs, and the grid that covers them. */
  private grid(count: number): { tiles: number; groups: [number, number] } {
    const tiles = Math.ceil(count / this.radixTile);
    const x = Math.min(tiles, this.ctx.limits.maxComputeWorkgroupsPerDimension);
    return { tiles, groups: [x, Math.ceil(tiles / x)] };
  }

  /** Stats, then upsweep / scan / downsweep per digit (from the docID's low byte up), then the copy back. */
  protected override sortDispatches(count: number): SortDispatch[] {
    if (!this.pipelinesR) throw new Error('RadixSorter: compile() first');
    const p = this.pipelinesR;
    const { tiles, groups } = this.grid(count);
    const ranges = scanRanges(tiles);
    const params = (digit: number) => new Uint32Array([count, tiles, digit | (Math.log2(256 / ranges) << 8), groups[0]]);
    const strided: [number, number] = [Math.min(STATS_GROUPS, Math.ceil(count / WG)), 1];
    const out: SortDispatch[] = [{ pipeline: p.stats_pass!, groups: strided, params: params(0), kind: 'stats' }];
    for (let d = 0; d < DIGITS; d++) {
      out.push({ pipeline: p.upsweep!, groups, params: params(d), kind: 'upsweep' });
      out.push({ pipeline: p.scan_counts!, groups: [ranges, 1], params: params(d), kind: 'scan' });
      out.push({ pipeline: p.downsweep!, groups, params: params(d), kind: 'downsweep' });
    }
    out.push({ pipeline: p.copy_back!, groups: strided, params: params(0), kind: 'copy-back' });
    return out;
  }

  protected override sortBindGroup(count: number): GPUBindGroup {
    const bytes = Math.max(count, 1) * BYTES_PER_PAIR;
    // Written before the submission that reads it (queue order).
    this.device.queue.writeBuffer(this.stats, 0, STATS_INIT);
    return this.device.createBindGroup({
      layout: this.layoutR!,
      entries: [
        { binding: 0, resource: { buffer: this.data!, offset: 0, size: bytes } },
        { binding: 1, resource: { buffer: this.alt!, offset: 0, size: bytes } },
        { binding: 2, resource: { buffer: this.counts! } },
        { binding: 3, resource: { buffer: this.stats, offset: 0, size: 4 * STATS_WORDS } },
        { binding: 4, resource: { buffer: this.paramBuffer!, offset: 0, size: PARAM_BYTES } },
      ],
    });
  }

  protected override encodeAfterSort(enc: GPUCommandEncoder, profile: boolean): void {
    if (!profile) return;
    this.statsRead ??= this.device.createBuffer({ size: 4 * 8, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST, label: 'radix stats readback' });
    enc.copyBufferToBuffer(this.stats, 0, this.statsRead, 0, 4 * 8);
  }

  /** Profile mode: how many digit passes ran (the stats the kernels decided from). */
  protected override async readAfterSort(profile: boolean): Promise<Partial<GpuSortTiming>> {
    if (!profile || !this.statsRead) return {};
    await this.statsRead.mapAsync(GPUMapMode.READ, 0, 4 * 8);
    const s = new Uint32Array(this.statsRead.getMappedRange(0, 4 * 8)).slice();
    this.statsRead.unmap();
    return { digitPasses: digitPassesOf(s) };
  }

  override dispose(): void {
    this.stats.destroy();
    this.statsRead?.destroy();
    super.dispose();
  }
}

/** Workgroups of the scan: a power of two up to 256, about tiles / 32 (a few thousand counts each). */
export function scanRanges(tiles: number): number {
  const want = Math.ceil(tiles / 32);
  let r = 1;
  while (r < want && r < 256) r <<= 1;
  return r;
}

/** Which of the 8 digit passes run, from the stats words (as kernels/radix.wgsl decides). */
export function digitPassesOf(stats: Uint32Array): number {
  let passes = 0;
  for (let d = 0; d < DIGITS; d++) {
    const doc = d < 4;
    if (doc && stats[4] === 0) continue;
    const varying = ((stats[doc ? 2 : 0]! ^ stats[doc ? 3 : 1]!) >>> ((d & 3) * 8)) & 0xff;
    if (varying !== 0) passes++;
  }
  return passes;
}
