/**
 * Document rows written into index.sqlite while the parse waits for batches, so that the merge
 * has fewer left to insert: on the H100 at 2 GB, inserting 797 K rows took 0.92 s of the main
 * thread beside the merge threads (docs/benchmarks.md). Rows go in in DocId order through the
 * same 64-row statements the merge uses, so index.sqlite's bytes do not change.
 */
import type { DocumentRecord, DocumentTable } from '../indexer/documents.js';
import { asDocId } from '../src/types.js';
import type { IndexStoreWriter } from './index-store.js';

/** Rows per piece: about 0.3 ms on the H100 machine, short enough not to hold up a batch. */
const ROWS_PER_PIECE = 256;

export class DocumentRowsAhead {
  private written = 0;

  /**
   * `releaseWritten`: drop the strings of the rows written (DocumentTable.releaseStrings); not
   * with --resume, whose checkpoints save the documents after the rows ahead write them.
   */
  constructor(readonly store: IndexStoreWriter, private readonly documents: DocumentTable, private readonly releaseWritten = false) {}

  /** Writes up to ROWS_PER_PIECE more rows; returns whether rows remain. */
  readonly writeSome = (): boolean => {
    const d = this.documents;
    const end = Math.min(d.count, this.written + ROWS_PER_PIECE);
    for (let i = this.written; i < end; i++) this.store.addDocument(i, d.externalIds[i]!, d.paths[i]!, d.lengthOf(asDocId(i)));
    this.written = end;
    if (this.releaseWritten) d.releaseStrings(end);
    return end < d.count;
  };

  /** Rows written so far. */
  get count(): number {
    return this.written;
  }

  /** The rows not written yet, for the merge. */
  rest(): Generator<DocumentRecord> {
    return this.documents.records(this.written);
  }
}
