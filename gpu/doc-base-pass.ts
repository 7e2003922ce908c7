/**
 * The pass that turns a block's batch-local document indexes into DocIds on the GPU
 * (kernels/doc-base.wgsl), encoded ahead of the sort in the same submission. The block filler
 * then copies each batch with one memcpy instead of adding the batch's first DocId to every pair
 * on the thread that also takes batches and feeds the GPU (the stage that bounded Indexgpu+).
 */
import { readFileSync } from 'node:fs';
import { assetUrl } from '../runtime/assets.js';
import type { DocBases, TermKeys } from '../src/shared/types.js';

const THREADS = 256;
/** Workgroups of the dispatch: enough to fill an H100 (132 SMs), looping over larger blocks. */
const GROUPS = 1024;
const PARAM_BYTES = 16;

const source = (): string => readFileSync(assetUrl('gpu/kernels/doc-base.wgsl'), 'utf8').replace('{{THREADS}}', String(THREADS));

/** Layout and pipeline per device, shared by every pass on it. */
const pipelines = new WeakMap<GPUDevice, { layout: GPUBindGroupLayout; pipeline: GPUComputePipeline }>();

export class DocBasePass {
  private readonly layout: GPUBindGroupLayout;
  private readonly pipeline: GPUComputePipeline;
  private readonly params: GPUBuffer;
  private segments?: GPUBuffer;
  private keys?: GPUBuffer;

  constructor(private readonly device: GPUDevice) {
    let cached = pipelines.get(device);
    if (!cached) {
      const layout = device.createBindGroupLayout({
        entries: [
          { binding: 0, visibility: GPUShaderStage.COMPUTE, buffer: { type: 'storage' } },
          { binding: 1, visibility: GPUShaderStage.COMPUTE, buffer: { type: 'read-only-storage' } },
          { binding: 2, visibility: GPUShaderStage.COMPUTE, buffer: { type: 'uniform', minBindingSize: PARAM_BYTES } },
          { binding: 3, visibility: GPUShaderStage.COMPUTE, buffer: { type: 'read-only-storage' } },
        ],
      });
      const module = device.createShaderModule({ code: source(), label: 'doc-base' });
      const pipeline = device.createComputePipeline({ layout: device.createPipelineLayout({ bindGroupLayouts: [layout] }), compute: { module, entryPoint: 'add_doc_base' }, label: 'doc-base' });
      cached = { layout, pipeline };
      pipelines.set(device, cached);
    }
    this.layout = cached.layout;
    this.pipeline = cached.pipeline;
    this.params = device.createBuffer({ size: PARAM_BYTES, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST, label: 'doc-base params' });
  }

  /**
   * Writes the segments and keys now and encodes the pass over pairs [0, count) of `data` into
   * `enc` (nothing when there are neither bases nor keys).
   */
  encode(enc: GPUCommandEncoder, data: GPUBuffer, count: number, docBases: DocBases | undefined, termKeys?: TermKeys): void {
    const segments = docBases ? docBases.length / 2 : 0;
    if ((segments === 0 && !termKeys) || count === 0) return;
    if (docBases && segments > 0 && docBases[0] !== 0) throw new RangeError('the first document base segment must start at pair 0');
    // An unused binding still needs a buffer of one element (a segment is 8 bytes, a key 4).
    const bytes = Math.max(8, segments * 8);
    this.segments = this.fit(this.segments, bytes, 'doc-base segments');
    if (segments > 0) this.device.queue.writeBuffer(this.segments, 0, docBases!);
    const keyBytes = Math.max(4, termKeys ? termKeys.byteLength : 0);
    this.keys = this.fit(this.keys, keyBytes, 'term keys');
    if (termKeys && termKeys.length > 0) this.device.queue.writeBuffer(this.keys, 0, termKeys);
    this.device.queue.writeBuffer(this.params, 0, new Uint32Array([count, segments, THREADS * GROUPS, termKeys ? 1 : 0]));
    const bindGroup = this.device.createBindGroup({
      layout: this.layout,
      entries: [
        { binding: 0, resource: { buffer: data, offset: 0, size: count * 8 } },
        { binding: 1, resource: { buffer: this.segments, offset: 0, size: bytes } },
        { binding: 2, resource: { buffer: this.params } },
        { binding: 3, resource: { buffer: this.keys, offset: 0, size: keyBytes } },
      ],
    });
    const pass = enc.beginComputePass();
    pass.setPipeline(this.pipeline);
    pass.setBindGroup(0, bindGroup);
    pass.dispatchWorkgroups(Math.min(GROUPS, Math.ceil(count / THREADS)));
    pass.end();
  }

  /** `buffer` if it holds `bytes`, else a new storage buffer that does (the old one destroyed). */
  private fit(buffer: GPUBuffer | undefined, bytes: number, label: string): GPUBuffer {
    if (buffer && buffer.size >= bytes) return buffer;
    buffer?.destroy();
    return this.device.createBuffer({ size: Math.max(bytes, 4096), usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST, label });
  }

  get gpuBytes(): number {
    return this.params.size + (this.segments?.size ?? 0) + (this.keys?.size ?? 0);
  }

  dispose(): void {
    this.params.destroy();
    this.segments?.destroy();
    this.keys?.destroy();
    this.segments = undefined;
  }
}
