/** What the corpus readers yield: documents, and the files or documents they had to skip. */

export interface SourceDocument {
  /** From the id/docid/_id/url field, else the path (+ ':' + line for JSONL, '#' + index for JSON arrays). */
  externalId: string;
  /** Path relative to the crawl root, '/'-separated. */
  path: string;
  /** 1-based line (JSONL) or 0-based element index (JSON arrays). */
  line?: number;
  title: string;
  /** Body text; the title is not repeated here (the indexer tokenizes title, then text). */
  text: string;
  /** Size of the document's raw source, for MB/s figures. */
  bytes: number;
}

/** A file or document that was not indexed, with the reason (shown to the user as one line). */
export interface SkippedItem {
  path: string;
  line?: number;
  reason: string;
}

export type CorpusItem = { kind: 'doc'; doc: SourceDocument } | { kind: 'skip'; skip: SkippedItem };

export interface FieldNames {
  id?: string[];
  title?: string[];
  text?: string[];
}

export interface CorpusOptions {
  /** Which JSON fields hold the id, title and text. */
  fields?: FieldNames;
}

export const DEFAULT_FIELDS: Required<FieldNames> = {
  id: ['id', 'docid', '_id', 'url'],
  title: ['title'],
  text: ['contents', 'text', 'body'],
};

/** A user mistake about the crawl itself (missing root): one clear line. */
export class CorpusError extends Error {
  override readonly name = 'CorpusError';
}
