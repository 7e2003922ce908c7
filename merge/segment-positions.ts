/**
 * positions.bin of a segment merge (segment-merge.ts), written after its postings, in format 3
 * whatever its inputs' (format 2 inputs are encoded again). Each merged term's positions are its
 * parts' (the inputs' lists of the term, in segment order), one after another. A posting's codes
 * depend only on its positions, its tf and its document's position bound (positions-file.ts),
 * none of which a merge changes, so the merged bytes are what one build of the live documents
 * writes. A term's bytes end padded to a byte and a code's end is not marked, so only a part that
 * ends its merged term, starts on a byte, has no deleted document and is format 3 is copied as
 * its bytes, whole (every term of a single segment, and the last segment's part of the others);
 * every other format-3 part is decoded beside its list to find where its postings end, and its
 * live postings' codes copied as bit ranges; a format-2 part's live postings are encoded again.
 */
import { join } from 'node:path';
import { decodePostings } from './postings-codec.js';
import { PositionsFile, PositionsFileWriter, POSITIONS_FILE, positionBounds } from './positions-file.js';
import { SegmentFormatError, type SegmentFigures, type SegmentReader } from './segment-reader.js';

/** One input of the merge as its positions are copied. */
export interface PositionsInput {
  reader: SegmentReader;
  figures: SegmentFigures;
  file: PositionsFile;
  /** The docID of the input's first live document in the merged segment. */
  docBase: number;
  /** With deleted documents: each docID's number among the live ones, -1 for a deleted one. */
  renumber?: Int32Array;
}

/** Which inputs' lists make each merged term: appended in termID order while the postings merge. */
export class MergedTermParts {
  /** Per part: its input, and the input's termID. */
  readonly inputs: number[] = [];
  readonly locals: number[] = [];
  /** Where each merged term's parts end in the arrays above. */
  readonly ends: number[] = [];

  add(input: number, local: number): void {
    this.inputs.push(input);
    this.locals.push(local);
  }

  endTerm(): void {
    this.ends.push(this.inputs.length);
  }

  get terms(): number {
    return this.ends.length;
  }
}

/**
 * Opens the inputs' positions files when every input has one (undefined when none has); a merge
 * of inputs with and without positions is refused, in one line. Each file is read whole while
 * it fits in `budget` bytes (what is left of the merge's memory): returns what is left.
 */
export function openInputPositions(readers: readonly SegmentReader[], budget: number): { files?: PositionsFile[]; budget: number } {
  const has = readers.map((r) => r.settings.positions === true);
  if (!has.some(Boolean)) return { budget };
  const without = has.indexOf(false);
  if (without >= 0) {
    const withDir = readers[has.indexOf(true)]!.dir;
    throw new SegmentFormatError(`segment merge: ${withDir} has positions (--positions), ${readers[without]!.dir} has none; segments with and without positions do not merge`);
  }
  const files: PositionsFile[] = [];
  try {
    for (const r of readers) {
      const file = new PositionsFile(join(r.dir, POSITIONS_FILE));
      files.push(file);
      if (file.documents !== r.stats.documents || file.terms !== r.stats.terms) throw new SegmentFormatError(`${file.path}: holds ${file.documents} documents and ${file.terms} terms; its segment ${r.stats.documents} and ${r.stats.terms}`);
      if (file.titleWeight !== files[0]!.titleWeight) throw new SegmentFormatError(`segment merge: ${file.path} has title weight ${file.titleWeight}, ${files[0]!.path} ${files[0]!.titleWeight}`);
      const bytes = file.bytes;
      if (bytes <= budget) {
        file.loadWhole();
        budget -= bytes;
      }
    }
  } catch (err) {
    for (const f of files) f.close();
    throw err;
  }
  return { files, budget };
}

/**
 * Writes `path`: `documents` documents (the inputs' live ones, in order) and the terms of
 * `parts`; returns its bytes and postings.
 */
export function writeMergedPositions(path: string, inputs: readonly PositionsInput[], parts: MergedTermParts, documents: number): { bytes: number; postings: number } {
  const titleLengths = new Uint32Array(documents);
  const ends = new Uint32Array(documents);
  let at = 0;
  for (const input of inputs) {
    const { file, renumber } = input;
    const inputEnds = file.ends ?? boundsOfFormat2(input);
    if (!renumber) {
      titleLengths.set(file.titleLengths, at);
      ends.set(inputEnds, at);
      at += file.titleLengths.length;
    } else
      for (let d = 0; d < file.titleLengths.length; d++)
        if (renumber[d]! >= 0) {
          titleLengths[at] = file.titleLengths[d]!;
          ends[at++] = inputEnds[d]!;
        }
  }
  if (at !== documents) throw new Error(`segment merge: ${at} documents' title lengths for ${documents} documents`);
  const titleWeight = inputs[0]!.file.titleWeight;
  const writer = new PositionsFileWriter(path, parts.terms, { titleLengths, ends, titleWeight });
  let postings = 0;
  try {
    let k = 0;
    for (let t = 0; t < parts.terms; t++) {
      writer.beginTerm(t);
      for (const end = parts.ends[t]!; k < end; k++) {
        const input = inputs[parts.inputs[k]!]!;
        const local = parts.locals[k]!;
        if (k === end - 1 && input.file.format === 3 && !input.renumber && writer.byteAligned) {
          writer.addEncoded(input.file.termBytes(local));
          postings += input.figures.df[local]!;
        } else if (input.file.format === 3) postings += copyBits(writer, input, local);
        else postings += encodeAgain(writer, input, local);
      }
    }
    writer.close();
  } catch (err) {
    writer.closeQuietly();
    throw err;
  }
  return { bytes: writer.offset, postings };
}

/** A format-2 input's position bounds, from its documents' lengths: what a build of them records. */
function boundsOfFormat2(input: PositionsInput): Uint32Array {
  const lengths = input.reader.documentLengths();
  if (lengths.length !== input.file.documents) throw new SegmentFormatError(`${input.reader.dir}: ${lengths.length} document lengths, ${input.file.path} ${input.file.documents} documents`);
  return positionBounds(lengths, input.file.titleLengths, input.file.titleWeight);
}

/** Copies the codes of term `local`'s postings in live documents as bit ranges (a run of live postings at a time); returns how many. */
function copyBits(writer: PositionsFileWriter, input: PositionsInput, local: number): number {
  const { figures, reader, renumber } = input;
  const list = decodePostings(reader.readListBytes(figures.offset[local]!, figures.length[local]!), figures.df[local]!);
  let bits: { bytes: Uint8Array; ends: Float64Array };
  try {
    bits = input.file.postingBits(local, list);
  } catch (err) {
    if (!(err instanceof RangeError)) throw err;
    throw new SegmentFormatError(`${input.file.path}: term ${local}: ${err.message}`);
  }
  const { bytes, ends } = bits;
  if (!renumber) {
    writer.addBits(bytes, 0, ends.length > 0 ? ends[ends.length - 1]! : 0);
    return ends.length;
  }
  let copied = 0;
  /** Where the run of live postings being gathered starts; -1 outside one. */
  let from = -1;
  for (let k = 0; k <= ends.length; k++) {
    const live = k < ends.length && renumber[list.docIds[k]!]! >= 0;
    const start = k === 0 ? 0 : ends[k - 1]!;
    if (live) {
      if (from < 0) from = start;
      copied++;
    } else if (from >= 0) {
      writer.addBits(bytes, from, start);
      from = -1;
    }
  }
  return copied;
}

/** Encodes again the positions of term `local`'s postings in live documents, in merged docIDs; returns how many. */
function encodeAgain(writer: PositionsFileWriter, input: PositionsInput, local: number): number {
  const { figures, reader, renumber, docBase } = input;
  const list = decodePostings(reader.readListBytes(figures.offset[local]!, figures.length[local]!), figures.df[local]!);
  const { docIds, tfs } = list;
  let written = 0;
  try {
    const cursor = input.file.cursor(local, list);
    for (let k = 0; k < docIds.length; k++) {
      // Every posting decoded, deleted ones too: the cursor reads forward, and its end is checked.
      const positions = cursor.positionsOf(k);
      const to = renumber ? renumber[docIds[k]!]! : docIds[k]!;
      if (to < 0) continue;
      writer.addPosting(docBase + to, tfs[k]!, positions, 0, positions.length);
      written++;
    }
    if (!cursor.atEnd) throw new RangeError(`bytes left after its ${docIds.length} postings`);
  } catch (err) {
    if (!(err instanceof RangeError)) throw err;
    throw new SegmentFormatError(`${input.file.path}: term ${local}: ${err.message}`);
  }
  return written;
}
