// After tsc: each entry that starts a process or a worker thread (the CLI and the four worker
// scripts) is rebuilt, in place, as one file with gpuindex's own modules inlined (packages in
// node_modules stay imports). Node's ESM loader resolves, reads and links every module of a
// graph one by one (the CLI's is ~60 files, a parse worker's ~25), and its own path functions
// get hot enough to be compiled by TurboFan: on mail, a bundled build was 1.008 -> 0.953 s
// (8 alternating rounds, docs/benchmarks.md). The library (dist/src/index.js) stays as tsc
// wrote it. Why esbuild: a well-kept bundler that keeps ESM evaluation order (cli-prestart.ts
// must run first), reads tsc's source maps, and needs no configuration file.
import { build } from 'esbuild';

const ENTRIES = ['src/cli.js', 'indexer/parse-worker.js', 'merge/merge-worker.js', 'merge/hash-worker.js', 'gpu/sort-thread-worker.js'];

for (const entry of ENTRIES) {
  const file = `dist/${entry}`;
  await build({
    entryPoints: [file],
    outfile: file,
    allowOverwrite: true,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    sourcemap: true,
    logLevel: 'warning',
  });
}
