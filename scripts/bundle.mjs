// After tsc: each entry that starts a process or a worker thread (the CLI and the four worker
// scripts) is rebuilt, in place, with gpuindex's own modules inlined (packages in node_modules
// stay imports; what it import()s goes into chunk files beside it, see below). Node's ESM loader resolves, reads and links every module of a
// graph one by one (the CLI's is ~60 files, a parse worker's ~25), and its own path functions
// get hot enough to be compiled by TurboFan: on mail, a bundled build was 1.008 -> 0.953 s
// (8 alternating rounds, 2-core machine). The library (dist/src/index.js) stays as tsc
// wrote it. Why esbuild: a well-kept bundler that keeps ESM evaluation order (cli-prestart.ts
// must run first), reads tsc's source maps, and needs no configuration file.
//
// What an entry imports with import() (the CLI: the build, the reader, GPU code; a parse worker:
// the sort of a one-block crawl) goes into chunk files beside it (`<name>.chunk-<hash>.js`), real
// ES modules: without splitting, esbuild inlines them as lazily initialized closures whose
// top-level constants become reassigned `var`s, and the hot loops of the block fill and the
// parse ran slower (H100, 2 GB crawl, Indexgpu+: parse+sort 2.64 -> 2.74 s, six rounds).
import { readdirSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { build } from 'esbuild';

const ENTRIES = ['src/cli.js', 'indexer/parse/parse-worker.js', 'merge/merge-worker.js', 'merge/lexicon-union-worker.js', 'merge/segment-merge-worker.js', 'src/feed-worker.js', 'merge/hash-worker.js', 'merge/impacts-worker.js', 'gpu/sort-thread-worker.js'];
const CHUNK = /\.chunk-[A-Z0-9]+\.js(\.map)?$/;

// Chunks of an earlier build (their names change with their contents).
for (const dir of new Set(ENTRIES.map((e) => dirname(`dist/${e}`)))) {
  for (const f of readdirSync(dir)) if (CHUNK.test(f)) rmSync(join(dir, f));
}

for (const entry of ENTRIES) {
  const file = `dist/${entry}`;
  await build({
    entryPoints: { [basename(file, '.js')]: file },
    // Beside the entry: modules find their files from a root one folder up (src/assets.ts).
    outdir: dirname(file),
    chunkNames: '[name].chunk-[hash]',
    splitting: true,
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
