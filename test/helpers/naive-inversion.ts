/**
 * The reference the index is checked against: an in-memory inversion with plain Maps,
 * in docID order, written as simply as possible.
 */
export interface NaiveIndex {
  /** term -> [[docId, tf], ...] in docId order */
  postings: Map<string, [number, number][]>;
  lengths: number[];
}

export function naiveInvert(docs: string[][]): NaiveIndex {
  const postings = new Map<string, [number, number][]>();
  docs.forEach((terms, docId) => {
    const tf = new Map<string, number>();
    for (const t of terms) tf.set(t, (tf.get(t) ?? 0) + 1);
    for (const [t, n] of tf) {
      if (!postings.has(t)) postings.set(t, []);
      postings.get(t)!.push([docId, n]);
    }
  });
  return { postings, lengths: docs.map((d) => d.length) };
}

/** Code point order, as CIFF and the lexicon use. */
export const codePointOrder = (a: string, b: string): number => {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  return Buffer.compare(x, y);
};
