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
 * Two rankings of a tile by digit in the downsweep (RadixRank): 'split4', two 4-bit splits with
 * per-invocation counters and a workgroup scan each (kernels/radix.wgsl, any adapter), and
 * 'match', subgroup ballots (kernels/radix-match.wgsl, adapters with subgroups), which also
 * decides the pass plan once in a kernel of its own and privatizes the upsweep's histogram.
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
/** Stats words bound: the 5 statistics, (match) the layout fault flag at 7 and the plan at 8 .. 16. */
const STATS_WORDS = 17;
/** The statistics' starting values (OR: 0, AND: all ones), the fault flag cleared. */
const STATS_INIT = new Uint32Array([0, 0xffffffff, 0, 0xffffffff, 0, 0, 0, 0]);
const STATS_FAULT = 7;

/** How the downsweep ranks a tile's keys by digit (see the class comment). */
export type RadixRank = 'split4' | 'match';
export const RADIX_RANKS: readonly RadixRank[] = ['split4', 'match'];

export interface RadixSorterOptions extends GpuSorterOptions {
  /** Default: 'match' where the adapter has subgroups (and they are not turned off) and its tile fits, else 'split4'. */
  rank?: RadixRank;
  /** Keys per invocation in a tile; default: the largest of 8, 4, 2 whose downsweep fits the workgroup memory. */
  keysPerThread?: number;
  /** Test hook: 128-lane ballot masks even where every subgroup has at most 32 invocations. */
  wideMasks?: boolean;
}

/** Shared memory of the split4 downsweep: the tile (or the counters), the scan scratch, bases, starts (4 bytes each). */
const downsweepBytes = (kpt: number): number => 4 * (Math.max(2 * WG * kpt, 8 * WG) + 3 * WG) + 4 * (WG + 5 + 1);
/** Shared memory of the match downsweep: the tile, 128 words per subgroup slot, scratch, bases, starts, slot sums. */
export const matchDownsweepBytes = (kpt: number, maxWarps: number): number => 4 * (2 * WG * kpt + 128 * maxWarps + 3 * WG + maxWarps + 2);

/** Keys per invocation: 8 where the tile fits the workgroup memory, else 4 (16 KiB, WebGPU's default). */
export function radixKeysPerThread(maxWorkgroupBytes: number, rank: RadixRank = 'split4', maxWarps = 8): number {
  const bytes = (kpt: number) => (rank === 'match' ? matchDownsweepBytes(kpt, maxWarps) : downsweepBytes(kpt));
  for (const kpt of [8, 4, 2]) if (bytes(kpt) <= maxWorkgroupBytes) return kpt;
  throw new RangeError(`the radix sort needs ${bytes(2)} bytes of workgroup memory, the device offers ${maxWorkgroupBytes}`);
}

/** Ballot masks of one u32 (subgroups of at most 32 invocations) or of four (up to 128). */
const MASKS_NARROW = `alias Mask = u32;
fn ballot(c: bool) -> Mask { return subgroupBallot(c).x; }
fn popCount(m: Mask) -> u32 { return countOneBits(m); }
fn lowestLane(m: Mask) -> u32 { return firstTrailingBit(m); }
fn lanesBelow(id: u32) -> Mask { return (1u << id) - 1u; }`;
const MASKS_WIDE = `alias Mask = vec4<u32>;
fn ballot(c: bool) -> Mask { return subgroupBallot(c); }
fn popCount(m: Mask) -> u32 { let c = countOneBits(m); return c.x + c.y + c.z + c.w; }
fn lowestLane(m: Mask) -> u32 {
  if (m.x != 0u) { return firstTrailingBit(m.x); }
  if (m.y != 0u) { return 32u + firstTrailingBit(m.y); }
  if (m.z != 0u) { return 64u + firstTrailingBit(m.z); }
  return 96u + firstTrailingBit(m.w);
}
fn lanesBelow(id: u32) -> Mask {
  var m = vec4<u32>(0u);
  for (var c = 0u; c < 4u; c++) {
    if (id >= 32u * c + 32u) { m[c] = 0xffffffffu; } else if (id > 32u * c) { m[c] = (1u << (id - 32u * c)) - 1u; }
  }
  return m;
}`;

/** Extra GPU bytes the radix sort holds beyond the network for a block of `pairs` (second buffer, tile counts). */
export function radixExtraBytes(pairs: number, keysPerThread = 8): number {
  const tiles = Math.ceil(Math.max(pairs, 1) / (WG * keysPerThread));
  return Math.max(pairs, 1) * BYTES_PER_PAIR + 4 * (WG * tiles + WG);
}

const cache = new WeakMap<GPUDevice, Map<string, { layout: GPUBindGroupLayout; pipelines: Partial<Record<Role, GPUComputePipeline>> }>>();
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

/** The kernels of a sort, by role: the entry points of each ranking. */
const ROLES = ['stats', 'plan', 'upsweep', 'scan', 'scan-ranges', 'downsweep', 'copy-back'] as const;
type Role = (typeof ROLES)[number];
const ENTRY_POINTS: Record<RadixRank, Partial<Record<Role, string>>> = {
  split4: { stats: 'stats_pass', upsweep: 'upsweep', scan: 'scan_counts', downsweep: 'downsweep', 'copy-back': 'copy_back' },
  match: { stats: 'stats_pass', plan: 'plan_pass', upsweep: 'upsweep_match', scan: 'scan_counts', 'scan-ranges': 'scan_ranges', downsweep: 'downsweep_match', 'copy-back': 'copy_back' },
};

export class RadixSorter extends GpuSorter {
  override readonly algorithm = 'radix';
  /** Keys per invocation in a tile, and the tile (pairs per upsweep / downsweep workgroup). */
  readonly keysPerThread: number;
  readonly radixTile: number;
  /** The stats reduction uses subgroup operations (the adapter has them and they were not turned off). */
  readonly subgroups: boolean;
  /** How the downsweep ranks (RadixRank). */
  readonly rank: RadixRank;
  /** Match: the most subgroups a workgroup can have (WG / the adapter's smallest subgroup), and the mask width. */
  readonly maxWarps: number;
  private readonly wideMasks: boolean;
  /** GpuSorter's, plus (on a software adapter, whose GPU memory is host memory) the second block and the counts. */
  override readonly hostBytesPerPair: number;
  private layoutR?: GPUBindGroupLayout;
  private pipelinesR?: Partial<Record<Role, GPUComputePipeline>>;
  private alt?: GPUBuffer; // the second block buffer
  private counts?: GPUBuffer;
  private readonly stats: GPUBuffer;
  private statsRead?: GPUBuffer;

  constructor(ctx: GpuContext, options: RadixSorterOptions = {}) {
    super(ctx, options);
    this.subgroups = ctx.hasSubgroups && options.subgroups !== false;
    const info = (this.device as GPUDevice & { adapterInfo?: { subgroupMinSize?: number; subgroupMaxSize?: number } }).adapterInfo;
    // WebGPU's subgroups are 4 to 128 invocations; where the adapter does not say, assume the worst.
    const minSize = Math.max(4, info?.subgroupMinSize ?? 4);
    this.maxWarps = Math.ceil(WG / minSize);
    this.wideMasks = options.wideMasks === true || (info?.subgroupMaxSize ?? 128) > 32;
    const storage = ctx.limits.maxComputeWorkgroupStorageSize;
    const matchFits = matchDownsweepBytes(2, this.maxWarps) <= storage;
    if (options.rank === 'match' && !this.subgroups) throw new RangeError('the match ranking needs subgroup operations, which this adapter does not have (or they were turned off)');
    if (options.rank === 'match' && !matchFits) throw new RangeError(`the match ranking needs ${matchDownsweepBytes(2, this.maxWarps)} bytes of workgroup memory, the device offers ${storage}`);
    this.rank = options.rank ?? (this.subgroups && matchFits ? 'match' : 'split4');
    const bytes = (kpt: number) => (this.rank === 'match' ? matchDownsweepBytes(kpt, this.maxWarps) : downsweepBytes(kpt));
    if (options.keysPerThread !== undefined && (!Number.isInteger(options.keysPerThread) || options.keysPerThread < 1 || WG * options.keysPerThread > 0xffff || bytes(options.keysPerThread) > storage)) {
      throw new RangeError(`${options.keysPerThread} keys per invocation: not a whole number from 1 whose tile is under 65536 keys and fits the ${storage} bytes of workgroup memory`);
    }
    this.keysPerThread = options.keysPerThread ?? radixKeysPerThread(storage, this.rank, this.maxWarps);
    this.radixTile = WG * this.keysPerThread;
    const software = isSoftwareAdapter(ctx.adapterInfo);
    this.hostBytesPerPair = BYTES_PER_PAIR * (software ? 3 : 2) + (software ? BYTES_PER_PAIR + Math.ceil(4 / this.keysPerThread) : 0);
    this.stats = this.device.createBuffer({ size: 4 * 32, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC, label: 'radix stats' });
  }

  /** The kernels' WGSL (kernels/radix.wgsl with its constants). */
  source(): string {
    const match = this.rank === 'match';
    const text = readFileSync(assetUrl('gpu/kernels/radix.wgsl'), 'utf8') + (match ? readFileSync(assetUrl('gpu/kernels/radix-match.wgsl'), 'utf8') : '');
    const values: Record<string, string | number> = {
      WG,
      KPT: this.keysPerThread,
      TILE: this.radixTile,
      SMEM: Math.max(2 * this.radixTile, 8 * WG),
      STATS_GROUPS,
      STATS_LEN: STATS_WORDS,
      // Where a kernel reads its pass decision (infoOf in radix.wgsl; planOf in radix-match.wgsl).
      PASS_INFO: match ? 'planOf' : 'infoOf',
      MAXWARPS: this.maxWarps,
      MASKS: this.wideMasks ? MASKS_WIDE : MASKS_NARROW,
      ENABLE: this.subgroups ? 'enable subgroups;' : '',
      STATS_REDUCE: this.subgroups ? STATS_REDUCE_SUBGROUPS : STATS_REDUCE_WORKGROUP,
    };
    const filled = text.replace(/\{\{(\w+)\}\}/g, (_, k: string) => String(values[k]));
    return this.options.transformKernel ? this.options.transformKernel(filled) : filled;
  }

  override async compile(): Promise<void> {
    if (this.pipelinesR) return;
    const shared = !this.options.transformKernel;
    const variant = `${this.rank}-${this.keysPerThread}-${this.subgroups ? 'subgroups' : 'workgroup'}-${this.wideMasks ? 'wide' : 'narrow'}`;
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
    const roles = Object.entries(ENTRY_POINTS[this.rank]) as [Role, string][];
    const created = await Promise.allSettled(
      roles.map(([, entryPoint]) => this.device.createComputePipelineAsync({ layout: pipelineLayout, compute: { module, entryPoint }, label: `radix ${entryPoint}` })),
    );
    const err = await this.device.popErrorScope();
    const failed = created.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed || err) {
      const reason = err?.message ?? (failed?.reason as Error | undefined)?.message ?? String(failed?.reason);
      throw new Error(`GPU kernel compilation failed: ${reason.replace(/\s*\n\s*/g, ' ').trim()}`);
    }
    const pipelines = Object.fromEntries(roles.map(([role], i) => [role, (created[i] as PromiseFulfilledResult<GPUComputePipeline>).value])) as Partial<Record<Role, GPUComputePipeline>>;
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
    const out: SortDispatch[] = [{ pipeline: p.stats!, groups: strided, params: params(0), kind: 'stats' }];
    if (p.plan) out.push({ pipeline: p.plan, groups: [1, 1], params: params(0), kind: 'stats' });
    for (let d = 0; d < DIGITS; d++) {
      out.push({ pipeline: p.upsweep!, groups, params: params(d), kind: 'upsweep' });
      out.push({ pipeline: p.scan!, groups: [ranges, 1], params: params(d), kind: 'scan' });
      if (p['scan-ranges']) out.push({ pipeline: p['scan-ranges'], groups: [1, 1], params: params(d), kind: 'scan' });
      out.push({ pipeline: p.downsweep!, groups, params: params(d), kind: 'downsweep' });
    }
    out.push({ pipeline: p['copy-back']!, groups: strided, params: params(0), kind: 'copy-back' });
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
    if (s[STATS_FAULT] !== 0) throw new Error('RadixSorter: a workgroup had more subgroups than the adapter\'s smallest subgroup size allows; sort with rank: \'split4\'');
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
