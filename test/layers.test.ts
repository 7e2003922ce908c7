import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
// @ts-expect-error: a plain ES module without types
import { findViolations, importsOf, layerFiles, layerOf } from '../scripts/check-layers.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));

describe('layers', () => {
  it('every import of src/, indexer/, gpu/, merge/ and runtime/ runs downward', () => {
    const files = layerFiles(root);
    expect(files.length).toBeGreaterThan(50);
    expect(findViolations(files)).toEqual([]);
  });

  it('finds the import forms a module uses: static, type-only, multi-line, re-export, dynamic', () => {
    const source = [
      "import { a } from './a.js';",
      "import type { B } from '../b/b.js';",
      'import {\n  c,\n  type D,\n} from "./c.js";',
      "export { e } from './e.js';",
      "export * from './f.js';",
      "const g = await import('../g.js');",
      "import 'node:fs';",
    ].join('\n');
    expect(importsOf(source)).toEqual(['./a.js', '../b/b.js', './c.js', './e.js', './f.js', '../g.js']);
  });

  it('names each upward import, and allows sideways and downward ones', () => {
    const files: [string, string][] = [
      ['merge/runs.ts', "import { x } from '../indexer/fill/block.js';\nimport { y } from '../src/shared/types.js';"],
      ['gpu/sort.ts', "import { w } from '../merge/runs.js';"],
      ['merge/heap.ts', "import type { G } from '../gpu/device.js';"],
      ['src/shared/types.ts', "import { z } from '../../runtime/grown.js';"],
      ['indexer/parse/p.ts', "import { t } from '../../src/build.js';\nimport { u } from '../analysis/tokenizer.js';"],
      ['runtime/x.ts', "import { s } from '../src/shared/errors.js';"],
    ];
    expect(findViolations(files)).toEqual([
      'merge/runs.ts imports indexer/fill/block.js: merge may not import indexer',
      'merge/heap.ts imports gpu/device.js: merge may not import gpu',
      'src/shared/types.ts imports runtime/grown.js: shared may not import runtime',
      'indexer/parse/p.ts imports src/build.js: indexer may not import src',
    ]);
    expect(layerOf('src/shared/options.ts')).toBe(0);
    expect(layerOf('src/build.ts')).toBe(5);
  });

  it('the parse and merge threads\' bundles load no SQLite: those threads start on every build, the merge threads on its tail', () => {
    for (const [script, entry] of [
      ['merge/merge-worker.js', 'mergeRange'],
      ['indexer/parse/parse-worker.js', 'parentPort'],
    ]) {
      const js = readFileSync(join(root, 'dist', script!), 'utf8');
      expect(js).toContain(entry);
      expect(js).not.toMatch(/from "better-sqlite3"/);
    }
  });
});
