/**
 * Brings the GPU's clocks up before a measurement. The SM clock falls to idle (435–720 MHz on
 * the H200 machine) within seconds of the GPU waiting on the CPU, e.g. while the CPU sorter runs
 * between sizes, and a sorter's stop-and-go load (upload, kernels, readback: 30–60 % busy) raises
 * it only slowly: a 2^24 radix sort read 3.47 ms at 1980 MHz and 11.6–12.9 ms at 435–555 MHz in
 * one process. Back-to-back dispatches of an arithmetic kernel keep the GPU fully busy, the
 * condition under which the clock climbs at once.
 */
import { isSoftwareAdapter, type GpuContext } from './device.js';

const WORKGROUP = 256;
const GROUPS = 4096;

const HEATER_WGSL = /* wgsl */ `
@group(0) @binding(0) var<storage, read_write> sink: array<u32>;

@compute @workgroup_size(${WORKGROUP})
fn heat(@builtin(global_invocation_id) id: vec3<u32>) {
  var x = id.x * 2654435761u + 1u;
  for (var i = 0u; i < 1024u; i = i + 1u) {
    x = x * 1664525u + 1013904223u;
    x = x ^ (x >> 13u);
  }
  // Written only when impossible, so the loop is not optimized away and memory stays idle.
  if (x == 0xffffffffu) { sink[id.x] = x; }
}`;

/**
 * Runs the heater kernel back to back until `ms` have passed (at least one batch); returns the
 * batches submitted. Not on a CPU-emulated adapter (lavapipe): it has no clocks to raise.
 */
export async function heatGpu(ctx: GpuContext, ms: number, groups = GROUPS): Promise<number> {
  if (ms <= 0 || isSoftwareAdapter(ctx.adapterInfo)) return 0;
  const { device } = ctx;
  const module = device.createShaderModule({ code: HEATER_WGSL });
  const pipeline = await device.createComputePipelineAsync({ layout: 'auto', compute: { module, entryPoint: 'heat' } });
  const sink = device.createBuffer({ size: WORKGROUP * groups * 4, usage: GPUBufferUsage.STORAGE });
  try {
    const bind = device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries: [{ binding: 0, resource: { buffer: sink } }] });
    const start = performance.now();
    let batches = 0;
    // Two batches in flight, so the queue never drains while the next is encoded.
    let inFlight: Promise<void> | undefined;
    do {
      const encoder = device.createCommandEncoder();
      const pass = encoder.beginComputePass();
      pass.setPipeline(pipeline);
      pass.setBindGroup(0, bind);
      for (let i = 0; i < 16; i++) pass.dispatchWorkgroups(groups);
      pass.end();
      device.queue.submit([encoder.finish()]);
      batches++;
      const done = device.queue.onSubmittedWorkDone();
      if (inFlight) await inFlight;
      inFlight = done;
    } while (performance.now() - start < ms);
    await inFlight;
    return batches;
  } finally {
    sink.destroy();
  }
}
