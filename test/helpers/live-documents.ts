import type { IndexWriter } from '../../src/writer.js';

/**
 * The naive reference of a live index: its live documents in arrival order (a replaced one
 * moves to the end). Each method applies one operation to a writer and to the reference; a
 * delete or replace when no document is live does nothing.
 */
export class LiveDocuments<D extends { id: string }> {
  constructor(public docs: D[] = []) {}

  async add(writer: IndexWriter, docs: D[]): Promise<void> {
    await writer.add(docs as never);
    this.docs.push(...docs);
  }

  /** Deletes the live documents at `picks` (modulo their count); `alsoSend`: ids the index does not hold, sent along. */
  async delete(writer: IndexWriter, picks: readonly number[], alsoSend: readonly string[] = []): Promise<void> {
    if (this.docs.length === 0) return;
    const ids = picks.map((p) => this.docs[p % this.docs.length]!.id);
    await writer.delete([...ids, ...alsoSend]);
    this.docs = this.docs.filter((d) => !ids.includes(d.id));
  }

  /** Replaces the live document at `pick` (modulo their count) with make(its id). */
  async replace(writer: IndexWriter, pick: number, make: (id: string) => D): Promise<void> {
    if (this.docs.length === 0) return;
    const id = this.docs[pick % this.docs.length]!.id;
    const doc = make(id);
    await writer.replace([doc as never]);
    this.docs = [...this.docs.filter((d) => d.id !== id), doc];
  }
}
