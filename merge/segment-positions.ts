/**
 * positions.bin of a segment merge (segment-merge.ts), written after its postings: each merged
 * term's positions are its parts' (the inputs' lists of the term, in segment order), one after
 * another. A posting's positions are encoded on their own (the first one, then gaps) and do not
 * depend on its docID, so a part with no deleted document is copied as its bytes, whole; a part
 * with deleted documents is walked posting by posting (its list decoded beside it, to tell each
 * posting's end: positions-file.ts) and the live postings' bytes copied.
 */
import { join } from 'node:path';
import { decodePostings } from './postings-codec.js';
import { PositionsFile, PositionsFileWriter, POSITIONS_FILE } from './positions-file.js';
import { SegmentFormatError, type SegmentFigures, type SegmentReader } from './segment-reader.js';

/** One input of the merge as its positions are copied. */
export interface PositionsInput {
  reader: SegmentReader;
  figures: SegmentFigures;
  file: PositionsFile;
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
  let at = 0;
  for (const input of inputs) {
    const lengths = input.file.titleLengths;
    if (!input.renumber) {
      titleLengths.set(lengths, at);
      at += lengths.length;
    } else for (let d = 0; d < lengths.length; d++) if (input.renumber[d]! >= 0) titleLengths[at++] = lengths[d]!;
  }
  if (at !== documents) throw new Error(`segment merge: ${at} documents' title lengths for ${documents} documents`);
  const titleWeight = inputs[0]!.file.titleWeight;
  const writer = new PositionsFileWriter(path, documents, parts.terms, titleLengths, titleWeight);
  let postings = 0;
  try {
    let k = 0;
    for (let t = 0; t < parts.terms; t++) {
      writer.beginTerm(t);
      for (const end = parts.ends[t]!; k < end; k++) {
        const input = inputs[parts.inputs[k]!]!;
        const local = parts.locals[k]!;
        const bytes = input.file.termBytes(local);
        if (!input.renumber) {
          writer.addEncoded(bytes);
          postings += input.figures.df[local]!;
        } else postings += copyLive(writer, input, local, bytes, titleWeight);
      }
    }
    writer.close();
  } catch (err) {
    writer.closeQuietly();
    throw err;
  }
  return { bytes: writer.offset, postings };
}

/** Copies the positions of term `local`'s postings in live documents; returns how many. */
function copyLive(writer: PositionsFileWriter, input: PositionsInput, local: number, bytes: Uint8Array, titleWeight: number): number {
  const { figures, reader, renumber } = input;
  const { docIds, tfs } = decodePostings(reader.readListBytes(figures.offset[local]!, figures.length[local]!), figures.df[local]!);
  const titles = input.file.titleLengths;
  let at = 0;
  let copied = 0;
  for (let k = 0; k < docIds.length; k++) {
    const start = at;
    const title = titles[docIds[k]!]!;
    // A posting's end: its positions' weights (titleWeight in the title, 1 after) add up to its tf.
    let p = 0;
    for (let weight = 0; weight < tfs[k]!; ) {
      let v = 0;
      let shift = 0;
      for (;;) {
        if (at >= bytes.length) throw new SegmentFormatError(`${input.file.path}: term ${local}'s positions run past their end`);
        const x = bytes[at++]!;
        v += (x & 0x7f) * 2 ** shift;
        if (x < 0x80) break;
        shift += 7;
      }
      p += v;
      weight += p < title ? titleWeight : 1;
    }
    if (renumber![docIds[k]!]! >= 0) {
      writer.addEncoded(bytes.subarray(start, at));
      copied++;
    }
  }
  return copied;
}
