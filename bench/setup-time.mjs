// Times opening the GPU and compiling the sort kernels, and the RSS each adds (what a memory plan
// would have to allow for if either ran in the background; 85 MiB for the kernels on lavapipe).
// Usage: node bench/setup-time.mjs [dist folder, default dist]
const T = () => performance.now();
const mib = () => process.memoryUsage.rss() / 2 ** 20;
const base = new URL(`../${process.argv[2] ?? 'dist'}/`, import.meta.url);
let t = T();
const dev = await import(new URL('gpu/device.js', base));
const { GpuSorter } = await import(new URL('gpu/gpu-sorter.js', base));
const tImport = T() - t;
for (let round = 1; round <= 3; round++) {
  const r0 = mib();
  t = T();
  const ctx = await dev.openGpu({});
  if (typeof ctx === 'string') throw new Error(ctx);
  const tOpen = T() - t;
  const r1 = mib();
  t = T();
  const s = new GpuSorter(ctx, {});
  await s.compile();
  const tCompile = T() - t;
  const r2 = mib();
  s.dispose();
  console.log(`${process.argv[2] ?? 'dist'} round ${round}: import ${tImport.toFixed(0)} ms, openGpu ${tOpen.toFixed(0)} ms (+${(r1 - r0).toFixed(1)} MiB RSS), compile ${tCompile.toFixed(0)} ms (+${(r2 - r1).toFixed(1)} MiB RSS)`);
}
