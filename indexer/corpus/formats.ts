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
