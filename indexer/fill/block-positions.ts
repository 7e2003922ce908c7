/**
 * --positions: the position of each pair a block holds, in fill order (docs/architecture.md
 * "Positions"). A document's pairs are its TermIds as the DocumentInverter emits them: the title
 * (L terms), the title again titleWeight − 1 times (BM25F's weight folded into tf), then the
 * text. So a pair's position follows from its index within the document and L alone:
 *
 *   title, first copy:   0 .. L−1
 *   the other copies:    NO_POSITION (a scoring device, not occurrences)
 *   text:                from L + 1 (L > 0; from 0 without a title): one position is left out,
 *                        so no phrase runs from the title into the text
 *
 * Stopwords are never emitted, so positions count indexed terms only.
 */

import { NO_POSITION } from '../../merge/run-positions.js';

/** Where the text's positions start in a document whose title has `titleLength` terms. */
export const textStart = (titleLength: number): number => (titleLength === 0 ? 0 : titleLength + 1);

/** The position of pair `i` of a document (see above). */
export function positionOf(i: number, titleLength: number, titleWeight: number): number {
  if (i < titleLength) return i;
  const titleEnd = titleLength * titleWeight;
  return i < titleEnd ? NO_POSITION : i - titleEnd + textStart(titleLength);
}

/**
 * A batch's pairs copied into blocks in order (BatchRemapper.copy): where the copy stands in
 * its documents, so each range copied costs one pass over it.
 */
export class BatchPositions {
  /** The document holding the next pair, and the batch index of its first pair. */
  private doc = 0;
  private docStart = 0;

  constructor(
    private readonly lengths: Uint32Array,
    private readonly titleLengths: Uint32Array,
    private readonly titleWeight: number,
  ) {}

  /** Writes the positions of the batch's pairs [from, from + count) to out[at ..]; ranges must come in order. */
  fill(out: Uint32Array, at: number, from: number, count: number): void {
    const { lengths, titleLengths, titleWeight } = this;
    const end = from + count;
    let j = from;
    let o = at;
    while (j < end) {
      while (j >= this.docStart + lengths[this.doc]!) this.docStart += lengths[this.doc++]!;
      const docStart = this.docStart;
      const docEnd = Math.min(end, docStart + lengths[this.doc]!);
      const title = titleLengths[this.doc]!;
      const titleEnd = title * titleWeight;
      const text = textStart(title) - titleEnd;
      for (; j < docEnd; j++) {
        const i = j - docStart;
        out[o++] = i < title ? i : i < titleEnd ? NO_POSITION : i + text;
      }
    }
  }
}
