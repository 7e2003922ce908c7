/** IndexContents for merge tests: a fresh index.sqlite in `dir` and a document table from plain rows. */
import { join } from 'node:path';
import { DocumentTable } from '../../indexer/fill/documents.js';
import { INDEX_DB, IndexStoreWriter } from '../../merge/index-store.js';
import { IndexRowsAhead } from '../../merge/rows-ahead.js';
import type { IndexContents } from '../../merge/write-index.js';
import { termOrderOf } from '../../merge/term-order.js';

export interface PlainDocument {
  externalId: string;
  path: string;
  length: number;
}

export function documentTable(documents: readonly PlainDocument[]): DocumentTable {
  const table = new DocumentTable();
  for (const d of documents) table.add(d.externalId, d.path, d.length);
  return table;
}

/**
 * Contents whose rows all go in at the merge (none ahead), unless the caller writes some first
 * through `rows`. `order` is read when the contents are (the caller may add terms until then).
 * `formatVersion` 3 writes the lexicon into index.sqlite, as indexes before lexicon.bin have it.
 */
export function contentsIn(dir: string, terms: readonly string[], documents: DocumentTable, settings: Record<string, unknown> = {}, releaseWritten = false, formatVersion: 3 | 4 = 4): IndexContents {
  return {
    rows: new IndexRowsAhead(new IndexStoreWriter(join(dir, INDEX_DB), { formatVersion }), documents, releaseWritten),
    termCount: terms.length,
    terms,
    get order() {
      return termOrderOf(terms);
    },
    documentCount: documents.count,
    totalTokens: documents.totalTokens,
    settings,
  };
}
