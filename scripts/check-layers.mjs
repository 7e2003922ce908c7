#!/usr/bin/env node
/**
 * The layering rule, checked: imports run one way, from the public API down to the shared
 * vocabulary. A module may import its own layer and the layers below it, never one above.
 *
 *   src/            public API, CLI, benchmarks          (top)
 *   indexer/        parse, fill, sort, pipelines, plans
 *   gpu/            WebGPU device, kernels, GpuSort     (writes runs through merge/)
 *   merge/          run files, heap merge, index files
 *   runtime/        threads, assets, CPU clocks, knobs
 *   src/shared/     ids, errors, the options type        (bottom: every layer may use it)
 *
 * Type-only imports count: a type is a dependency too. Usage: node scripts/check-layers.mjs
 * (exit 1 and one line per upward import); tests import findViolations().
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Layers from the bottom up; the first prefix that matches a path names its layer. */
export const LAYERS = [
  { name: 'shared', prefix: 'src/shared/' },
  { name: 'runtime', prefix: 'runtime/' },
  { name: 'merge', prefix: 'merge/' },
  { name: 'gpu', prefix: 'gpu/' },
  { name: 'indexer', prefix: 'indexer/' },
  { name: 'src', prefix: 'src/' },
];

/** The rank of a repository path's layer (0 = bottom), or -1 outside the layers. */
export function layerOf(path) {
  // src/shared/ is matched before src/: LAYERS lists it first.
  return LAYERS.findIndex((l) => path.startsWith(l.prefix));
}

const IMPORT = /(?:\bimport\s*(?:type\s+)?(?:[\w*{}\s,$]+?\s+from\s+)?|\bexport\s*(?:type\s+)?(?:\*(?:\s+as\s+\w+)?|\{[^}]*\})\s*from\s*|\bimport\s*\()\s*['"](\.{1,2}\/[^'"]+)['"]/g;

/** Relative specifiers imported by `source` (static, re-exports, dynamic import()). */
export function importsOf(source) {
  const out = [];
  for (const m of source.matchAll(IMPORT)) out.push(m[1]);
  return out;
}

/** `files`: [repository path, source text]. Returns one message per import that goes upward. */
export function findViolations(files) {
  const out = [];
  for (const [path, source] of files) {
    const from = layerOf(path);
    if (from < 0) continue;
    for (const spec of importsOf(source)) {
      const target = normalize(join(dirname(path), spec));
      const to = layerOf(target);
      if (to > from) out.push(`${path} imports ${target}: ${LAYERS[from].name} may not import ${LAYERS[to].name}`);
      else if (to < 0 && !target.startsWith('node_modules/')) out.push(`${path} imports ${target}, outside the layers`);
    }
  }
  return out;
}

/** The TypeScript modules of the layers (the AssemblyScript sources of the scanner excepted). */
export function layerFiles(root) {
  const files = [];
  const walk = (dir) => {
    for (const name of readdirSync(join(root, dir))) {
      const path = `${dir}/${name}`;
      if (statSync(join(root, path)).isDirectory()) {
        if (path !== 'indexer/scan/wasm') walk(path);
      } else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) files.push([path, readFileSync(join(root, path), 'utf8')]);
    }
  };
  for (const top of ['src', 'indexer', 'gpu', 'merge', 'runtime']) walk(top);
  return files;
}

if (process.argv[1] && normalize(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = join(dirname(fileURLToPath(import.meta.url)), '..');
  const violations = findViolations(layerFiles(root));
  for (const v of violations) console.error(v);
  if (violations.length) process.exit(1);
  console.log(`layers: ${layerFiles(root).length} modules, every import runs downward`);
}
