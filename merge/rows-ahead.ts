/**
 * The rows of index.sqlite known before the merge, the documents, written while the parse waits
 * for batches, so that the merge has fewer left to insert: on the H100 at 2 GB, inserting 797 K
 * document rows took 0.92 s of the main thread beside the merge threads. (The terms' rows wait
 * for the merge: termIDs are ranks in code point order, final only once every term is known.)
 *
 * The rows go in in one order whatever the timing, so that index.sqlite's bytes do not depend
 * on how far ahead the writing got: batch by batch, in the order the fill consumed them. The
 * fill reports each batch it has consumed (batchFilled); what was not written ahead is written
 * in the same order by writeRest().
 */
import { grown } from '../runtime/grown.js';
import { asDocId, type DocId } from '../src/shared/types.js';
import type { IndexStoreWriter } from './index-store.js';

/** What the rows ahead read of the parse's document table (indexer/fill/documents.ts). */
export interface DocumentRows {
  readonly count: number;
  readonly externalIds: readonly (string | undefined)[];
  readonly paths: readonly (string | undefined)[];
  /** WARC documents' [WARC-Date, WARC-Record-ID]. */
  readonly warc: ReadonlyMap<number, readonly [string, string]>;
  lengthOf(docId: DocId): number;
  /** Drops the strings of documents [0, end), written by now. */
  releaseStrings(end: number): void;
}

/** Rows per piece: about 0.3 ms on the H100 machine, short enough not to hold up a batch. */
const ROWS_PER_PIECE = 256;

export class IndexRowsAhead {
  private docsWritten = 0;
  /** Documents after each batch the fill consumed; `next` is the first not yet written through. */
  private bounds = new Uint32Array(256);
  private boundsUsed = 0;
  private next = 0;

  /**
   * `store`: the database, or how to open it on first use (by writeSome, which the parse calls
   * while it waits for its first batch: the parse workers get their tasks before the ~3 ms of
   * opening it and creating its tables). Documents already there (restored by --resume) form
   * the first batch. `releaseWritten`: drop the strings of the document rows written
   * (DocumentRows.releaseStrings); not with --resume, whose checkpoints save the documents after
   * the rows ahead write them.
   */
  constructor(
    store: IndexStoreWriter | (() => IndexStoreWriter),
    private readonly documents: DocumentRows,
    private readonly releaseWritten = false,
  ) {
    if (typeof store === 'function') this.openStore = store;
    else this.opened = store;
    this.batchFilled();
  }

  private opened?: IndexStoreWriter;
  private readonly openStore?: () => IndexStoreWriter;

  get store(): IndexStoreWriter {
    return (this.opened ??= this.openStore!());
  }

  /** Closes the database if it was opened (a build that failed). */
  abort(): void {
    this.opened?.abort();
  }

  /** The fill has consumed one more batch: its documents are final. */
  readonly batchFilled = (): void => {
    const docs = this.documents.count;
    const n = this.boundsUsed;
    if (n > 0 && this.bounds[n - 1] === docs) return;
    if (n + 1 > this.bounds.length) this.bounds = grown(this.bounds, n + 1);
    this.bounds[n] = docs;
    this.boundsUsed = n + 1;
  };

  /**
   * Writes up to ROWS_PER_PIECE more rows of the batches consumed so far (a first call opens the
   * database instead); returns whether rows of them remain.
   */
  readonly writeSome = (): boolean => {
    if (this.opened === undefined) {
      this.opened = this.openStore!();
      return true;
    }
    return this.write(ROWS_PER_PIECE) > 0 || this.next < this.boundsUsed;
  };

  /** Writes every row not written yet, in the same order (the merge calls it once the parse is over). */
  writeRest(): void {
    this.batchFilled();
    this.write(Infinity);
    this.store.flushDocuments();
  }

  /** Writes up to `budget` rows; returns how many. */
  private write(budget: number): number {
    const d = this.documents;
    let written = 0;
    while (this.next < this.boundsUsed && written < budget) {
      const docEnd = Math.min(this.bounds[this.next]!, this.docsWritten + budget - written);
      for (let i = this.docsWritten; i < docEnd; i++) this.store.addDocument(i, d.externalIds[i]!, d.paths[i]!, d.lengthOf(asDocId(i)), d.warc.get(i));
      written += docEnd - this.docsWritten;
      this.docsWritten = docEnd;
      if (this.releaseWritten) d.releaseStrings(docEnd);
      if (docEnd < this.bounds[this.next]!) break;
      this.next++;
    }
    return written;
  }

  /** Document rows written so far. */
  get count(): number {
    return this.docsWritten;
  }

}
