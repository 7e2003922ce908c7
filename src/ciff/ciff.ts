/**
 * CIFF export (Lin et al., SIGIR 2020): varint-length-delimited protobuf messages, one Header,
 * then one PostingsList per term in lexicographic term order (docids as d-gaps), then one
 * DocRecord per document. This is the format PISA, Anserini and Terrier import.
 */
import { closeSync, openSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import type { IndexReader } from '../reader.js';
import { UserError } from '../shared/errors.js';
import { ProtoWriter } from './protobuf.js';

export const CIFF_VERSION = 1;

class DelimitedFileWriter {
  private readonly fd: number;
  private buf = new Uint8Array(1 << 22);
  private used = 0;
  private readonly lengthPrefix = new ProtoWriter();

  constructor(path: string) {
    this.fd = openSync(path, 'wx');
  }

  private put(data: Uint8Array): void {
    if (this.used + data.length > this.buf.length) this.flush();
    if (data.length > this.buf.length) {
      writeSync(this.fd, data);
      return;
    }
    this.buf.set(data, this.used);
    this.used += data.length;
  }

  message(msg: Uint8Array): void {
    this.put(this.lengthPrefix.reset().varint(msg.length).view());
    this.put(msg);
  }

  flush(): void {
    let off = 0;
    while (off < this.used) off += writeSync(this.fd, this.buf, off, this.used - off);
    this.used = 0;
  }

  close(): void {
    this.flush();
    closeSync(this.fd);
  }
}

export interface CiffExportResult {
  postingsLists: number;
  docRecords: number;
  bytes: number;
}

/** Writes the whole index as CIFF to `path` (through a temporary file renamed at the end). */
export function exportCiff(reader: IndexReader, path: string, description: string): CiffExportResult {
  // CIFF numbers documents 0..N-1 and states each list's df: an index with deleted documents in
  // its segments has neither until a merge drops them.
  if (reader.segmentList().some((s) => s.deleted > 0)) throw new UserError(`${reader.path} has deleted documents: run \`gpuindex optimize\` on it before exporting`);
  const stats = reader.stats();
  const tmp = `${path}.tmp-${process.pid}`;
  const out = new DelimitedFileWriter(tmp);
  try {
    const header = new ProtoWriter()
      .uint(1, CIFF_VERSION)
      .uint(2, stats.terms)
      .uint(3, stats.documents)
      .uint(4, stats.terms)
      .uint(5, stats.documents)
      .uint(6, stats.totalTokens)
      .double(7, stats.averageLength)
      .string(8, description);
    out.message(header.view());
    const list = new ProtoWriter();
    const posting = new ProtoWriter();
    let lists = 0;
    for (const e of reader.lexicon()) {
      const { docIds, tfs } = reader.readList(e);
      list.reset().string(1, e.term).uint(2, e.df).uint(3, e.cf);
      let prev = 0;
      for (let i = 0; i < docIds.length; i++) {
        posting.reset().uint(1, docIds[i]! - prev).uint(2, tfs[i]!);
        prev = docIds[i]!;
        list.bytes(4, posting.view()); // never empty: tf >= 1
      }
      out.message(list.view());
      lists++;
    }
    const doc = new ProtoWriter();
    let docs = 0;
    for (const d of reader.documents()) {
      out.message(doc.reset().uint(1, d.docId).string(2, d.externalId).uint(3, d.length).view());
      docs++;
    }
    out.close();
    renameSync(tmp, path);
    return { postingsLists: lists, docRecords: docs, bytes: statSync(path).size };
  } catch (err) {
    try {
      out.close();
    } catch {
      /* already closed */
    }
    rmSync(tmp, { force: true });
    throw err;
  }
}
