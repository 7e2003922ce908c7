/** What the corpus readers yield: documents, and the files or documents they had to skip. */
import { UserError } from '../../src/shared/errors.js';

export interface SourceDocument {
  /** From the id/docid/_id/url field, else the path (+ ':' + line for JSONL, '#' + index for JSON arrays). */
  externalId: string;
  /** Path relative to the crawl root, '/'-separated (the file's name when the crawl is one file). */
  path: string;
  /** 1-based line (JSONL) or 0-based element index (JSON arrays); absent for whole-file documents. */
  line?: number;
  /** '' when none. */
  title: string;
  /** Set when externalId is the path + ':' + line fallback (JSONL without an id field). */
  idFromLine?: true;
  /** Body text; the title is not repeated here (the indexer tokenizes title, then text). */
  text: string;
  /** Size of the document's raw (decompressed) source in bytes, for MB/s figures. */
  bytes: number;
  /**
   * Set when the document was indexed despite a problem worth a warning, e.g.
   * 'invalid UTF-8 (2 byte sequences that do not decode)'. One line, like a skip reason.
   */
  warning?: string;
  /**
   * Set for a JSONL line a JsonlLineHandler took: the document's TermIds (title, then text),
   * already inverted, a view valid until the reader's next item; title and text are then ''.
   */
  termIds?: Uint32Array;
  /**
   * With termIds inverted before the document's turn (a copy: a WARC member's records are read
   * together), the title's terms among them (DocumentInverter.titleLength then), for positions.
   */
  titleTerms?: number;
  /** A WARC record's WARC-Date and WARC-Record-ID (the externalId is its WARC-Target-URI). */
  warc?: WarcFields;
}

export interface WarcFields {
  date?: string;
  recordId?: string;
}

/**
 * Stands in for JSON.parse and the field lookup of a JSONL line (the parse's WebAssembly fast
 * path, indexer/jsonl-fast-path.ts): the document's id (undefined: none, the reader's path:line
 * fallback) and TermIds, or undefined to have the reader take the line the ordinary way.
 * `line` is valid UTF-8 JSON text without its line end, BOM or blank lines.
 */
export type JsonlLineHandler = (line: Buffer) => { externalId: string | undefined; termIds: Uint32Array } | undefined;

/** A file or document that was not indexed, with the reason (shown to the user as one line). */
export interface SkippedItem {
  path: string;
  line?: number;
  reason: string;
}

/**
 * A doc, a skip (bad input, one line each), or something that is not a document and no fault
 * (a WARC request record, an image response): counted by `what` ('request records',
 * 'image/png payloads'), never a line of its own.
 */
export type CorpusItem = { kind: 'doc'; doc: SourceDocument } | { kind: 'skip'; skip: SkippedItem } | { kind: 'ignored'; path: string; what: string };

export type { CorpusOptions, FieldNames } from '../../src/shared/options.js';
import type { FieldNames } from '../../src/shared/options.js';

export const DEFAULT_FIELDS: Readonly<Required<FieldNames>> = Object.freeze({
  id: ['id', 'docid', '_id', 'url'],
  title: ['title'],
  text: ['contents', 'text', 'body'],
});

/**
 * A user mistake about the crawl itself (root missing, not a folder or a supported file, not
 * readable): the message is one clear line. A UserError, so the CLI prints it without a stack.
 */
export class CorpusError extends UserError {
  constructor(message: string) {
    super(message);
    Object.defineProperty(this, 'name', { value: 'CorpusError' });
  }
}
