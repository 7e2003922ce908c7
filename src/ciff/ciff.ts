/**
 * CIFF export (Lin et al., SIGIR 2020): varint-length-delimited protobuf messages, one Header,
 * then one PostingsList per term in lexicographic term order (docids as d-gaps), then one
 * DocRecord per document. This is the format PISA, Anserini and Terrier import.
 */
import { closeSync, existsSync, fsyncSync, openSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { removeStaleTemps, tempSibling } from '../output.js';
import type { IndexReader } from '../reader.js';
import { storageFailure, UserError } from '../shared/errors.js';
import { ProtoWriter } from './protobuf.js';

export const CIFF_VERSION = 1;

class DelimitedFileWriter {
  private readonly fd: number;
  private closed = false;
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

  /** Flushes, and syncs the file to disk: it is renamed into place next, and must be whole there after a crash. */
  close(): void {
    this.flush();
    fsyncSync(this.fd);
    this.closed = true;
    closeSync(this.fd);
  }

  /** Closes without writing what is buffered (the export failed); once only, as the number may be reused. */
  abandon(): void {
    if (this.closed) return;
    this.closed = true;
    closeSync(this.fd);
  }
}

export interface CiffExportResult {
  postingsLists: number;
  docRecords: number;
  bytes: number;
}

export interface CiffExportOptions {
  /** Replace a file at the output path. Default false: an existing output is a UserError. */
  force?: boolean;
}

/**
 * Writes the whole index as CIFF to `path`, through a temporary file beside it renamed into
 * place when complete: the path holds what it held before or a whole export, never a part.
 */
export function exportCiff(reader: IndexReader, path: string, description: string, options: CiffExportOptions = {}): CiffExportResult {
  // CIFF numbers documents 0..N-1 and states each list's df: an index with deleted documents in
  // its segments has neither until a merge drops them.
  if (reader.segmentList().some((s) => s.deleted > 0)) throw new UserError(`${reader.path} has deleted documents: run \`gpuindex optimize\` on it before exporting`);
  const force = options.force === true;
  checkOutputFile(path, force);
  const stats = reader.stats();
  removeStaleTemps(path);
  const tmp = tempSibling(resolve(path));
  let out: DelimitedFileWriter;
  try {
    out = new DelimitedFileWriter(tmp);
  } catch (err) {
    throw new UserError(storageFailure(err, path) ?? `cannot write the output ${path} (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
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
    // A file that appeared at the path during the export is not replaced either.
    if (!force) checkOutputFile(path, false);
    renameSync(tmp, path);
    return { postingsLists: lists, docRecords: docs, bytes: statSync(path).size };
  } catch (err) {
    out.abandon();
    rmSync(tmp, { force: true });
    const storage = storageFailure(err, path);
    throw storage ? new UserError(storage) : err;
  }
}

/** The output path's checks, as a build's (src/output.ts): an existing output only with force, and never a folder. */
function checkOutputFile(path: string, force: boolean): void {
  let isFolder: boolean;
  try {
    isFolder = statSync(path).isDirectory();
  } catch {
    const parent = dirname(resolve(path));
    if (!existsSync(parent)) throw new UserError(`output's parent folder does not exist: ${parent}`);
    return;
  }
  if (isFolder) throw new UserError(`output is a folder: ${path} (export writes a file)`);
  if (!force) throw new UserError(`output already exists: ${path} (use --force to replace it)`);
}
