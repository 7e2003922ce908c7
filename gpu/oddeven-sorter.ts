/**
 * Batcher's odd-even merge sort on WebGPU (kernels/oddeven.wgsl), the sorting network the
 * comparative studies set beside the bitonic one: the same comparator count order,
 * O(n log² n), fewer comparators than the bitonic network, but a structure that tiles worse.
 * Its step k < p compares XOR partners only after shifting the index by k, so consecutive steps
 * share no Γ-partition and the last steps of a stage cross tile boundaries: the stages up to
 * the tile size run in workgroup memory (the network's tile and its padding), every later step
 * is a dispatch of its own. In place, in the network's buffer, with its bind group layout:
 * Θ(1) extra memory, like the network.
 */
import { readFileSync } from 'node:fs';
import { assetUrl } from '../runtime/assets.js';
import { DocBasePass } from './doc-base-pass.js';
import { log2, nextPow2 } from './bitonic-plan.js';
import { GpuSorter, type SortDispatch } from './gpu-sorter.js';

const GROUP = 256;

const cache = new WeakMap<GPUDevice, Map<string, { local: GPUComputePipeline; step: GPUComputePipeline }>>();

/** The steps after the tile stages for a block of n pairs: (log2 p, log2 k) in order. */
export function oddEvenGlobalSteps(n: number, tile: number): { logP: number; logK: number }[] {
  const steps: { logP: number; logK: number }[] = [];
  for (let logP = log2(tile); 2 ** (logP + 1) <= nextPow2(n); logP++) for (let logK = logP; logK >= 0; logK--) steps.push({ logP, logK });
  return steps;
}

export class OddEvenSorter extends GpuSorter {
  override readonly algorithm = 'oddeven';
  private pipelinesOe?: { local: GPUComputePipeline; step: GPUComputePipeline };

  source(): string {
    const values: Record<string, number> = { TILE: this.tile, LOG_TILE: log2(this.tile), TILE_PADDED: this.tile + this.tile / 16, THREADS: this.tileThreads, GROUP };
    const text = readFileSync(assetUrl('gpu/kernels/oddeven.wgsl'), 'utf8').replace(/\{\{(\w+)\}\}/g, (_, k: string) => String(values[k]));
    return this.options.transformKernel ? this.options.transformKernel(text) : text;
  }

  override async compile(): Promise<void> {
    if (this.pipelinesOe) return;
    const key = `${this.tile}-${this.tileThreads}`;
    const shared = !this.options.transformKernel;
    const cached = shared ? cache.get(this.device)?.get(key) : undefined;
    this.docBasePass ??= new DocBasePass(this.device);
    if (cached) {
      this.pipelinesOe = cached;
      return;
    }
    this.device.pushErrorScope('validation');
    const module = this.device.createShaderModule({ code: this.source(), label: 'oddeven' });
    const created = await Promise.allSettled(
      ['oe_local_sort', 'oe_global_step'].map((entryPoint) => this.device.createComputePipelineAsync({ layout: this.pipelineLayout, compute: { module, entryPoint }, label: `oddeven ${entryPoint}` })),
    );
    const err = await this.device.popErrorScope();
    const failed = created.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed || err) {
      const reason = err?.message ?? (failed?.reason as Error | undefined)?.message ?? String(failed?.reason);
      throw new Error(`GPU kernel compilation failed: ${reason.replace(/\s*\n\s*/g, ' ').trim()}`);
    }
    const [local, step] = created.map((r) => (r as PromiseFulfilledResult<GPUComputePipeline>).value);
    this.pipelinesOe = { local: local!, step: step! };
    if (shared) {
      let perDevice = cache.get(this.device);
      if (!perDevice) cache.set(this.device, (perDevice = new Map()));
      perDevice.set(key, this.pipelinesOe);
    }
  }

  private grid(groups: number): [number, number] {
    const x = Math.min(groups, this.ctx.limits.maxComputeWorkgroupsPerDimension);
    return [x, Math.ceil(groups / x)];
  }

  /** The tile stages, then one dispatch per step of every larger stage. */
  protected override sortDispatches(count: number): SortDispatch[] {
    if (!this.pipelinesOe) throw new Error('OddEvenSorter: compile() first');
    if (count <= 1) return [];
    const tiles = this.grid(Math.ceil(count / this.tile));
    const out: SortDispatch[] = [{ pipeline: this.pipelinesOe.local, groups: tiles, params: [count, 0, 0, tiles[0]], kind: 'local-sort' }];
    const comparators = nextPow2(count) / 2;
    const steps = this.grid(Math.ceil(comparators / GROUP));
    for (const { logP, logK } of oddEvenGlobalSteps(count, this.tile)) {
      out.push({ pipeline: this.pipelinesOe.step, groups: steps, params: [count, comparators, logP | (logK << 8), steps[0]], kind: 'global-step' });
    }
    return out;
  }
}
