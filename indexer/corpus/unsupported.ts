/**
 * Files of types the readers do not take (images, stylesheets, scripts in a crawl of HTML
 * pages): not bad input, so they are counted per extension and reported in one line, not one
 * line each.
 */
import { escapeControls } from '../../src/shared/errors.js';

/** What the walk gives as the reason for such a file (also a skip's reason in readCorpus). */
export const UNSUPPORTED_TYPE = 'unsupported file type';

/** Stands for a name without an extension in the counts. */
export const NO_EXTENSION = '(none)';

/** The files of unsupported types a crawl holds, in crawl order, and how many of each extension. */
export interface UnsupportedFiles {
  count: number;
  /** Extension (lowercase, with its dot; `.png.gz` for a gzipped one) -> files, most first. */
  byExtension: Record<string, number>;
  /** Paths relative to the crawl, in crawl order. */
  items: string[];
}

/** ".png" for "_static/Plus.PNG", ".svg.gz" for "a.svg.gz", ".buildinfo" for ".buildinfo", "(none)" for "Makefile". */
export function extensionOf(path: string): string {
  const name = path.slice(path.lastIndexOf('/') + 1).toLowerCase();
  const gz = name.endsWith('.gz') && name.length > 3 ? '.gz' : '';
  const stem = gz ? name.slice(0, -3) : name;
  const dot = stem.lastIndexOf('.');
  if (dot < 0) return gz || NO_EXTENSION;
  return stem.slice(dot) + gz;
}

export function unsupportedFiles(paths: readonly string[]): UnsupportedFiles {
  const counts = new Map<string, number>();
  for (const p of paths) {
    const ext = extensionOf(p);
    counts.set(ext, (counts.get(ext) ?? 0) + 1);
  }
  // Most first; ties by name, with no extension last.
  const key = (ext: string) => (ext === NO_EXTENSION ? '\uffff' : ext);
  const ordered = [...counts].sort((a, b) => b[1] - a[1] || (key(a[0]) < key(b[0]) ? -1 : key(a[0]) > key(b[0]) ? 1 : 0));
  return { count: paths.length, byExtension: Object.fromEntries(ordered), items: [...paths] };
}

/** "skipped 39 files of unsupported types: 21 .png, 9 .js, 6 .css, 3 (none)" */
export function describeUnsupported(u: Pick<UnsupportedFiles, 'count' | 'byExtension'>): string {
  const parts = Object.entries(u.byExtension).map(([ext, n]) => `${n} ${ext}`);
  return escapeControls(`skipped ${u.count} ${u.count === 1 ? 'file of an unsupported type' : 'files of unsupported types'}: ${parts.join(', ')}`);
}
