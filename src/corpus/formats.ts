/** File formats by extension; each may also be gzipped (`.gz`). */
export type CorpusFormat = 'jsonl' | 'json' | 'html' | 'text';

const BY_EXTENSION: Record<string, CorpusFormat> = {
  jsonl: 'jsonl',
  ndjson: 'jsonl',
  json: 'json',
  html: 'html',
  htm: 'html',
  txt: 'text',
  md: 'text',
};

export interface FileFormat {
  format: CorpusFormat;
  gzip: boolean;
}

export function formatOf(name: string): FileFormat | undefined {
  let n = name.toLowerCase();
  const gzip = n.endsWith('.gz');
  if (gzip) n = n.slice(0, -3);
  const dot = n.lastIndexOf('.');
  if (dot < 0) return undefined;
  const format = BY_EXTENSION[n.slice(dot + 1)];
  return format ? { format, gzip } : undefined;
}
