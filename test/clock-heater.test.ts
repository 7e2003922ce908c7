import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { heatGpu } from '../gpu/clock-heater.js';
import { closeGpu, openGpu, type GpuContext } from '../gpu/device.js';
import { hasGpu } from './helpers/gpu-available.js';

describe.skipIf(!hasGpu())('the clock heater (bench-sort)', () => {
  let ctx: GpuContext;
  beforeAll(async () => {
    const c = await openGpu();
    if (typeof c === 'string') throw new Error(c);
    ctx = c;
  });
  afterAll(() => closeGpu());

  it('does nothing on a CPU-emulated adapter or for 0 ms', async () => {
    expect(await heatGpu({ ...ctx, adapterInfo: { ...ctx.adapterInfo, device: 'llvmpipe (LLVM 19)', description: 'lavapipe' } }, 50, 1)).toBe(0);
    expect(await heatGpu(ctx, 0, 1)).toBe(0);
  });

  it('on a hardware adapter, submits at least one batch, and the device stays usable', async () => {
    const hardware = { ...ctx, adapterInfo: { vendor: 'nvidia', architecture: '', device: 'test', description: 'test' } };
    const batches = await heatGpu(hardware, 30, 1);
    expect(batches).toBeGreaterThanOrEqual(1);
    expect(ctx.fault).toBeUndefined();
  });
});
