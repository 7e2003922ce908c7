/**
 * Lists a crawl's files in a deterministic order: names sorted by UTF-16 code units, folders
 * depth-first. Symbolic links are followed only when their target stays inside the crawl root;
 * folder loops are cut by remembering the real paths already walked.
 */
import { readdir, realpath, stat } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { formatOf } from './formats.js';
import { CorpusError, type SkippedItem } from './types.js';

export interface CorpusListing {
  /** The folder the paths are relative to (the root, or its parent when the root is a file). */
  base: string;
  files: string[];
  skipped: SkippedItem[];
}

const toPosix = (p: string): string => (sep === '/' ? p : p.split(sep).join('/'));
const inside = (realRoot: string, p: string): boolean => p === realRoot || p.startsWith(realRoot.endsWith(sep) ? realRoot : realRoot + sep);

export async function listCorpusFiles(root: string): Promise<CorpusListing> {
  let rootStat;
  try {
    rootStat = await stat(root);
  } catch {
    throw new CorpusError(`crawl not found: ${root}`);
  }
  if (rootStat.isFile()) {
    const base = dirname(root);
    const name = relative(base, root);
    return formatOf(name) ? { base, files: [toPosix(name)], skipped: [] } : { base, files: [], skipped: [{ path: toPosix(name), reason: 'unsupported file type' }] };
  }
  const realRoot = await realpath(root);
  const files: string[] = [];
  const skipped: SkippedItem[] = [];
  const visited = new Set<string>([realRoot]);

  async function walk(dir: string): Promise<void> {
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch (err) {
      skipped.push({ path: toPosix(relative(root, dir)) || '.', reason: `cannot read folder (${(err as NodeJS.ErrnoException).code ?? err})` });
      return;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const e of entries) {
      const full = join(dir, e.name);
      const rel = toPosix(relative(root, full));
      let isDir = e.isDirectory();
      let isFile = e.isFile();
      if (e.isSymbolicLink()) {
        let target: string;
        try {
          target = await realpath(full);
        } catch {
          skipped.push({ path: rel, reason: 'broken symbolic link' });
          continue;
        }
        if (!inside(realRoot, target)) {
          skipped.push({ path: rel, reason: 'symbolic link points outside the crawl' });
          continue;
        }
        try {
          const s = await stat(target);
          isDir = s.isDirectory();
          isFile = s.isFile();
        } catch {
          skipped.push({ path: rel, reason: 'broken symbolic link' });
          continue;
        }
        if (isDir) {
          if (visited.has(target)) {
            skipped.push({ path: rel, reason: 'symbolic link loop' });
            continue;
          }
        }
      }
      if (isDir) {
        let real: string;
        try {
          real = await realpath(full);
        } catch {
          continue;
        }
        if (visited.has(real) && !e.isSymbolicLink()) continue;
        visited.add(real);
        await walk(full);
      } else if (isFile) {
        if (formatOf(e.name)) files.push(rel);
        else skipped.push({ path: rel, reason: 'unsupported file type' });
      } else {
        skipped.push({ path: rel, reason: 'not a regular file' });
      }
    }
  }
  await walk(root);
  return { base: root, files, skipped };
}
