/**
 * The document table built during parsing: DocIds are dense and increase in crawl order.
 * Columnar arrays keep millions of documents cheap; the merge stage writes them to SQLite.
 */
import { asDocId, type DocId } from '../../src/shared/types.js';
import { grown } from '../../runtime/grown.js';

export class DocumentTable {
  readonly externalIds: string[] = [];
  readonly paths: string[] = [];
  /** WARC documents: DocId -> [WARC-Date, WARC-Record-ID] ('' for a missing one). */
  readonly warc = new Map<number, [string, string]>();
  private lengths = new Uint32Array(1024);
  totalTokens = 0;
  /** Documents below this DocId have had their strings dropped (releaseStrings starts there). */
  private released = 0;

  add(externalId: string, path: string, length: number): DocId {
    const id = this.externalIds.length;
    // Documents of one file share one path string (each batch from a worker brings its own copies).
    if (id > 0 && path === this.paths[id - 1]) path = this.paths[id - 1]!;
    if (id === this.lengths.length) this.lengths = grown(this.lengths, id + 1);
    this.externalIds.push(externalId);
    this.paths.push(path);
    this.lengths[id] = length;
    this.totalTokens += length;
    return asDocId(id);
  }

  setWarc(docId: number, date: string, recordId: string): void {
    this.warc.set(docId, [date, recordId]);
  }

  /** The next DocId that add() will assign. */
  get nextDocId(): DocId {
    return asDocId(this.externalIds.length);
  }

  get count(): number {
    return this.externalIds.length;
  }

  /** --positions: each document's title length in terms (indexer/fill/block-positions.ts); absent until set. */
  private titles?: Uint32Array;

  setTitleLength(docId: number, terms: number): void {
    this.titles ??= new Uint32Array(Math.max(1024, docId + 1));
    if (docId >= this.titles.length) this.titles = grown(this.titles, docId + 1);
    this.titles[docId] = terms;
  }

  /** Every document's title length, indexed by DocId (0 where none was set; a view, as lengthsView). */
  titleLengthsView(): Uint32Array {
    const n = this.externalIds.length;
    if (!this.titles || this.titles.length < n) this.titles = grown(this.titles ?? new Uint32Array(0), n, this.titles?.length ?? 0);
    return this.titles.subarray(0, n);
  }

  lengthOf(docId: DocId): number {
    return this.lengths[docId]!;
  }

  /** Every document's length, indexed by DocId (a view: valid until the next add). */
  lengthsView(): Uint32Array {
    return this.lengths.subarray(0, this.externalIds.length);
  }

  /**
   * Drops the external id and path strings of the documents below `end` (their rows are in
   * index.sqlite already): the main thread's heap then holds only the rows not yet written, so
   * its collections, which every mapped 128 MB GPU range starts, mark less. Their lengths stay.
   */
  releaseStrings(end: number): void {
    for (let i = this.released; i < end; i++) {
      this.externalIds[i] = '';
      this.paths[i] = '';
      this.warc.delete(i);
    }
    this.released = Math.max(this.released, end);
  }
}
