/**
 * The JSONL fast path of a parser: a line goes into the WebAssembly scanner as bytes, is
 * validated there and its configured fields located (indexer/wasm/json-line.ts), and its ASCII
 * title and text are tokenized where they lie: no JSON.parse, no JS string for the text, no
 * copy of it into the scanner. Pieces with non-ASCII characters or \u escapes are decoded
 * alone and take the ordinary analysis. Lines it cannot vouch for (not an object, a number or
 * an array as title or text, no text field, longer than LINE_CAP, invalid JSON) go the
 * ordinary way, which also words any error: so the documents, their TermIds and every skip
 * reason are those of JSON.parse and documentFromJson (tested in test/jsonl-fast-path.test.ts).
 */
import type { JsonlLineHandler, ResolvedFields } from '../corpus/index.js';
import type { DocumentInverter } from './document-inverter.js';

/** Value kinds of a span (indexer/wasm/json-line.ts). */
const ABSENT = 0;
const PLAIN = 1;
const ESCAPED = 2;
const DECODE = 3;
const NUMBER = 4;
const LITERAL = 5;
const ARRAY = 6;

const isString = (kind: number): boolean => kind >= PLAIN && kind <= DECODE;

/**
 * The line handler for readCorpusFile, or undefined where the scanner is off
 * (GPUINDEX_ASCII_SCAN=js), the fast path is off (GPUINDEX_JSONL_FAST=0) or the field names do
 * not fit the scanner.
 */
export function jsonlFastPath(fields: ResolvedFields, inverter: DocumentInverter): JsonlLineHandler | undefined {
  if (process.env.GPUINDEX_JSONL_FAST === '0') return undefined;
  const table = inverter.begin();
  if (table === undefined) return undefined;
  const keys = [...new Set([...fields.id, ...fields.title, ...fields.text])];
  if (!table.setJsonKeys(keys)) return undefined;
  const idKeys = fields.id.map((k) => keys.indexOf(k));
  const titleKeys = fields.title.map((k) => keys.indexOf(k));
  const textKeys = fields.text.map((k) => keys.indexOf(k));
  const textSpans: number[] = [];

  return (line) => {
    const scanner = inverter.begin()!;
    const spans = scanner.parseJsonLine(line);
    if (spans === undefined) return undefined;
    // The id: documentFromJson's first non-empty string or finite number.
    let externalId: string | undefined;
    for (const k of idKeys) {
      const kind = spans[3 * k]!;
      const start = spans[3 * k + 1]!;
      const end = spans[3 * k + 2]!;
      if (isString(kind) && end > start) {
        externalId = kind === PLAIN ? line.toString('latin1', start, end) : (JSON.parse(line.toString('utf8', start - 1, end + 1)) as string);
        break;
      }
      if (kind === NUMBER) {
        const v = JSON.parse(line.toString('latin1', start, end)) as number;
        if (Number.isFinite(v)) {
          externalId = String(v);
          break;
        }
      }
    }
    // The title: the first title field that asText reads; a number or an array needs its
    // string form (String(), join): the ordinary way.
    let title = -1;
    for (const k of titleKeys) {
      const kind = spans[3 * k]!;
      if (isString(kind)) {
        title = k;
        break;
      }
      if (kind === NUMBER || kind === ARRAY) return undefined;
    }
    textSpans.length = 0;
    for (const k of textKeys) {
      const kind = spans[3 * k]!;
      if (isString(kind)) textSpans.push(k);
      else if (kind === NUMBER || kind === ARRAY) return undefined;
    }
    // No text field: the ordinary way says so.
    if (textSpans.length === 0) return undefined;
    // Title, then the text fields in order: the tokens of the text joined with '\n' (a
    // separator, so no token spans two fields), in the same order of first occurrence.
    if (title >= 0 && spans[3 * title + 2]! > spans[3 * title + 1]!) {
      addPiece(inverter, line, spans, title);
      inverter.weightTitle(0);
    }
    for (const k of textSpans) addPiece(inverter, line, spans, k);
    return { externalId, termIds: inverter.pieces() };
  };
}

function addPiece(inverter: DocumentInverter, line: Buffer, spans: Int32Array, k: number): void {
  const kind = spans[3 * k]!;
  const start = spans[3 * k + 1]!;
  const end = spans[3 * k + 2]!;
  if (kind === DECODE) inverter.addText(JSON.parse(line.toString('utf8', start - 1, end + 1)) as string);
  else inverter.addLineSpan(start, end, kind === ESCAPED);
}

export const SPAN_KINDS = { ABSENT, PLAIN, ESCAPED, DECODE, NUMBER, LITERAL, ARRAY } as const;
