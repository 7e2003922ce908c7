/**
 * MANIFEST.json: the SHA-256 and size of every file of an index, written last at build time
 * (after SQLite has closed its file and lexicon.bin is finished), so `gpuindex verify` can tell damaged bytes from a
 * complete index.
 */
import { createHash } from 'node:crypto';
import { closeSync, existsSync, openSync, readFileSync, readSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { IMPACTS_FILE } from './impacts.js';
import { LEXICON_FILE } from './lexicon-file.js';

export const MANIFEST_FILE = 'MANIFEST.json';

export interface Manifest {
  format: 'gpuindex';
  formatVersion: number;
  files: Record<string, { bytes: number; sha256: string }>;
}

export function sha256OfFile(path: string): string {
  const hash = createHash('sha256');
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.alloc(1 << 20);
    for (let n; (n = readSync(fd, buf, 0, buf.length, null)) > 0; ) hash.update(buf.subarray(0, n));
  } finally {
    closeSync(fd);
  }
  return hash.digest('hex');
}

/** Files a segment may have beside those its writer names: listed when present (lexicon.bin: format 4). */
const SIDE_FILES = [LEXICON_FILE, IMPACTS_FILE];

/**
 * `known`: SHA-256s already computed while the files were written (not read back). Side files
 * (impacts.bin) in `dir` are listed too.
 */
export function writeManifest(dir: string, files: readonly string[], formatVersion: number, known: Record<string, string> = {}): void {
  const manifest: Manifest = { format: 'gpuindex', formatVersion, files: {} };
  for (const f of [...files, ...SIDE_FILES.filter((s) => !files.includes(s) && existsSync(join(dir, s)))]) manifest.files[f] = { bytes: statSync(join(dir, f)).size, sha256: known[f] ?? sha256OfFile(join(dir, f)) };
  writeFileSync(join(dir, MANIFEST_FILE), JSON.stringify(manifest, null, 2) + '\n');
}

export function readManifest(dir: string): Manifest {
  return JSON.parse(readFileSync(join(dir, MANIFEST_FILE), 'utf8')) as Manifest;
}
