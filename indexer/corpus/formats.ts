/** File formats by extension (case-insensitive); each may also be gzipped (`.gz`). */
export type CorpusFormat = 'jsonl' | 'json' | 'html' | 'text' | 'markdown' | 'warc';

const BY_EXTENSION: Record<string, CorpusFormat> = {
  jsonl: 'jsonl',
  ndjson: 'jsonl',
  json: 'json',
  html: 'html',
  htm: 'html',
  txt: 'text',
  md: 'markdown',
  warc: 'warc',
  // Common Crawl's extracted text: name.warc.wet.gz
  wet: 'warc',
};

/** For messages: ".jsonl, .ndjson, ... (each also .gz)". */
export const SUPPORTED_EXTENSIONS = `${Object.keys(BY_EXTENSION)
  .map((e) => '.' + e)
  .join(', ')} (each also gzipped, .gz)`;

export interface FileFormat {
  format: CorpusFormat;
  gzip: boolean;
}

export function formatOf(name: string): FileFormat | undefined {
  const slash = name.lastIndexOf('/');
  let n = (slash >= 0 ? name.slice(slash + 1) : name).toLowerCase();
  const gzip = n.endsWith('.gz');
  if (gzip) n = n.slice(0, -3);
  const dot = n.lastIndexOf('.');
  if (dot < 0) return undefined;
  const ext = n.slice(dot + 1);
  const format = Object.hasOwn(BY_EXTENSION, ext) ? BY_EXTENSION[ext] : undefined;
  return format ? { format, gzip } : undefined;
}

/** formatOf by a name's extension as written, with the one before a '.gz' (all formatOf reads). */
const byExtension = new Map<string, FileFormat | undefined>();
const GZ = /\.gz$/i;

/**
 * formatOf, cached by extension: for a listing's 200,000 names, formatOf each (a lower-cased copy
 * of the name) was most of a plan step's ~90 ms, on the main thread before any worker starts.
 */
export function formatOfListed(path: string): FileFormat | undefined {
  const slash = path.lastIndexOf('/');
  const dot = path.lastIndexOf('.');
  const from = dot > slash && GZ.test(path) ? path.lastIndexOf('.', dot - 1) : dot;
  // No extension of the base name's own (or a bare '.gz' one): rare, asked directly.
  if (from <= slash) return formatOf(path);
  const ext = path.slice(from);
  if (byExtension.has(ext)) return byExtension.get(ext);
  const fmt = formatOf(path);
  if (byExtension.size < 4096) byExtension.set(ext, fmt);
  return fmt;
}
