/**
 * Lists a crawl's files in a deterministic order: entry names sorted by UTF-16 code units,
 * folders depth-first (a folder's files and subfolders in one sorted sequence).
 *
 * Symbolic links. A link whose real path leaves the crawl root is skipped ("points outside the
 * crawl"); so is a broken one. A link inside the root points at something the walk reaches at
 * its own path anyway (the walk itself never goes through links), so following it could only
 * index the same documents twice: such links are skipped, naming the target, except a file link
 * whose target would not be indexed by itself (its own name has no supported extension), which
 * is read under the link's name. So every real file is read at most once and a link loop cannot
 * arise.
 */
import type { Dirent } from 'node:fs';
import { lstat, readdir, realpath, stat } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, sep } from 'node:path';
import { formatOf, formatOfListed, SUPPORTED_EXTENSIONS } from './formats.js';
import { CorpusError, type SkippedItem } from './types.js';
import { UNSUPPORTED_TYPE } from './unsupported.js';

export interface CorpusListing {
  /** The folder the paths are relative to: the root, or its parent when the root is one file. */
  base: string;
  /** Paths relative to `base`, '/'-separated, in crawl order. */
  files: string[];
  /** Entries not read, each with its reason (bad input: unreadable, not a regular file, links). */
  skipped: SkippedItem[];
  /** Files of types the readers do not take (unsupported.ts), in crawl order: not bad input. */
  unsupported: string[];
}

/** The walk's result in crawl order, files and skipped entries interleaved. */
export type WalkEntry = { file: string } | { skip: SkippedItem };

const toPosix = (p: string): string => (sep === '/' ? p : p.split(sep).join('/'));
const byCodeUnits = (a: Dirent, b: Dirent): number => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
const exists = (p: string): Promise<boolean> => lstat(p).then(() => true, () => false);
const codeOf = (err: unknown): string => (err as NodeJS.ErrnoException)?.code ?? String((err as Error)?.message ?? err);

export async function listCorpusFiles(root: string): Promise<CorpusListing> {
  const { base, entries } = await walkCompact(root);
  const files: string[] = [];
  const skipped: SkippedItem[] = [];
  const unsupported: string[] = [];
  for (const e of entries) {
    if (typeof e === 'string') files.push(e);
    else if (e.skip.reason === UNSUPPORTED_TYPE) unsupported.push(e.skip.path);
    else skipped.push(e.skip);
  }
  return { base, files, skipped, unsupported };
}

/** Throws CorpusError when the root itself is missing, unreadable or of the wrong kind. */
export async function walkCorpus(root: string): Promise<{ base: string; entries: WalkEntry[] }> {
  const { base, entries } = await walkCompact(root);
  return { base, entries: entries.map((e) => (typeof e === 'string' ? { file: e } : e)) };
}

/**
 * The walk's entries with a file as its path alone: 200,000 files made 200,000 more objects
 * that lived through the walk, and the young generation's collections, which copy what
 * survives, took about half of it.
 */
type CompactEntry = string | { skip: SkippedItem };

/** Whether a file name has a supported extension (formatOf, cached by its extension: formatOfListed). */
const supported = (name: string): boolean => formatOfListed(name) !== undefined;

async function walkCompact(root: string): Promise<{ base: string; entries: CompactEntry[] }> {
  let rootStat;
  try {
    rootStat = await stat(root);
  } catch (err) {
    if (codeOf(err) === 'ENOENT') throw new CorpusError(`crawl not found: ${root}`);
    throw new CorpusError(`cannot read the crawl ${root} (${codeOf(err)})`);
  }
  if (rootStat.isFile()) {
    const name = basename(root);
    if (!formatOf(name)) throw new CorpusError(`not a supported crawl file: ${root} (supported: ${SUPPORTED_EXTENSIONS})`);
    return { base: dirname(root), entries: [name] };
  }
  if (!rootStat.isDirectory()) throw new CorpusError(`crawl is not a folder or a regular file: ${root}`);
  const realRoot = await realpath(root);

  const entries: (CompactEntry | { link: string })[] = [];
  const skip = (path: string, reason: string): void => {
    entries.push({ skip: { path, reason } });
  };
  let links = 0;

  /** `dir`'s listing: asked now, unless its parent's walk asked for it already (`listing`). */
  async function walk(dir: string, relDir: string, listing?: Promise<Dirent[]>): Promise<void> {
    let list: Dirent[];
    try {
      list = await (listing ?? readdir(dir, { withFileTypes: true }));
    } catch (err) {
      if (relDir === '') throw new CorpusError(`cannot read the crawl folder ${root} (${codeOf(err)})`);
      skip(relDir, `cannot read folder (${codeOf(err)})`);
      return;
    }
    list.sort(byCodeUnits);
    // The subfolders' listings, asked at once: the thread pool reads several while this walk goes
    // on in order, where it waited for one folder at a time (a crawl of many small folders).
    const ahead = new Map<string, Promise<Dirent[]>>();
    for (const e of list) {
      if (!e.isDirectory()) continue;
      const p = readdir(join(dir, e.name), { withFileTypes: true });
      p.catch(() => {}); // reported by the walk that awaits it
      ahead.set(e.name, p);
    }
    for (const e of list) {
      const rel = relDir === '' ? e.name : `${relDir}/${e.name}`;
      // A name that is not valid UTF-8 reaches us with U+FFFD in place of its bad bytes, and
      // that name opens nothing: say so, rather than "cannot read (ENOENT)" later.
      if (e.name.includes('\uFFFD') && !(await exists(join(dir, e.name)))) {
        skip(rel, 'file name is not valid UTF-8 (cannot be opened by name; rename it)');
        continue;
      }
      let kind: 'dir' | 'file' | 'link' | 'other';
      if (e.isDirectory()) kind = 'dir';
      else if (e.isFile()) kind = 'file';
      else if (e.isSymbolicLink()) kind = 'link';
      else if (e.isFIFO() || e.isSocket() || e.isBlockDevice() || e.isCharacterDevice()) kind = 'other';
      else {
        // the file system did not say (DT_UNKNOWN): ask
        try {
          const s = await lstat(join(dir, e.name));
          kind = s.isDirectory() ? 'dir' : s.isFile() ? 'file' : s.isSymbolicLink() ? 'link' : 'other';
        } catch (err) {
          skip(rel, `cannot read (${codeOf(err)})`);
          continue;
        }
      }
      // A file needs no path joined here: the listing holds `rel` (200,000 joins: 0.2 s).
      if (kind === 'dir') await walk(join(dir, e.name), rel, ahead.get(e.name));
      else if (kind === 'file') {
        if (supported(e.name)) entries.push(rel);
        else skip(rel, UNSUPPORTED_TYPE);
      } else if (kind === 'link') {
        entries.push({ link: rel });
        links++;
      } else skip(rel, 'not a regular file');
    }
  }
  await walk(root, '');

  if (links > 0) {
    // Second pass over the links, now that every file reached directly is known.
    const listed = new Map<string, string>(); // real path (relative) -> the path it is read as
    for (const e of entries) if (typeof e === 'string') listed.set(e, e);
    for (let i = 0; i < entries.length; i++) {
      const e = entries[i]!;
      if (typeof e !== 'string' && 'link' in e) entries[i] = await resolveLink(e.link, join(root, e.link), realRoot, listed);
    }
  }
  return { base: root, entries: entries as CompactEntry[] };
}

async function resolveLink(rel: string, full: string, realRoot: string, listed: Map<string, string>): Promise<CompactEntry> {
  let target: string;
  try {
    target = await realpath(full);
  } catch {
    return { skip: { path: rel, reason: 'broken symbolic link' } };
  }
  const targetRel = relative(realRoot, target);
  if (targetRel === '..' || targetRel.startsWith('..' + sep) || isAbsolute(targetRel)) {
    return { skip: { path: rel, reason: 'symbolic link points outside the crawl' } };
  }
  if (targetRel === '') return { skip: { path: rel, reason: 'symbolic link to the crawl root (not followed)' } };
  const at = toPosix(targetRel);
  let s;
  try {
    s = await stat(target);
  } catch (err) {
    return { skip: { path: rel, reason: `cannot read the target of the symbolic link (${codeOf(err)})` } };
  }
  if (s.isDirectory()) return { skip: { path: rel, reason: `symbolic link to the folder ${at}, walked at its own path` } };
  if (!s.isFile()) return { skip: { path: rel, reason: 'symbolic link to something that is not a regular file' } };
  const indexedAs = listed.get(at);
  if (indexedAs !== undefined) {
    return { skip: { path: rel, reason: `symbolic link to ${at}, ${indexedAs === at ? 'indexed at its own path' : `already indexed as ${indexedAs}`}` } };
  }
  if (!formatOf(basename(rel))) return { skip: { path: rel, reason: UNSUPPORTED_TYPE } };
  listed.set(at, rel);
  return rel;
}
