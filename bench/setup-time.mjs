// Times opening the GPU and compiling the sort kernels (a one-off measurement; argv[2]: the dist folder).
const T = () => performance.now();
const base = new URL(`../${process.argv[2] ?? 'dist'}/`, import.meta.url);
let t = T();
const dev = await import(new URL('gpu/device.js', base));
const { GpuSorter } = await import(new URL('gpu/gpu-sorter.js', base));
const tImport = T() - t;
for (let round = 1; round <= 3; round++) {
  t = T();
  const ctx = await dev.openGpu({});
  if (typeof ctx === 'string') throw new Error(ctx);
  const tOpen = T() - t;
  t = T();
  const s = new GpuSorter(ctx, {});
  await s.compile();
  const tCompile = T() - t;
  s.dispose();
  console.log(`${process.argv[2]} round ${round}: import ${tImport.toFixed(0)} ms, openGpu ${tOpen.toFixed(0)} ms, compile ${tCompile.toFixed(0)} ms`);
}
