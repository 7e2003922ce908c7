/**
 * An independent CIFF reader for the tests (does not share code with merge/ciff.ts):
 * decodes the delimited Header, PostingsList and DocRecord messages.
 */
import { readFileSync } from 'node:fs';

export interface CiffIndex {
  header: Record<string, number | string>;
  lists: { term: string; df: number; cf: number; postings: { docid: number; tf: number }[] }[];
  docs: { docid: number; collectionDocid: string; doclength: number }[];
}

function varintAt(b: Uint8Array, pos: { p: number }): number {
  let v = 0;
  let mul = 1;
  for (;;) {
    const x = b[pos.p++]!;
    v += (x & 127) * mul;
    if (x < 128) return v;
    mul *= 128;
  }
}

/** Decodes one message into field -> list of values (numbers, or byte arrays for length-delimited fields). */
function fields(msg: Uint8Array): Map<number, (number | Uint8Array)[]> {
  const out = new Map<number, (number | Uint8Array)[]>();
  const pos = { p: 0 };
  const add = (f: number, v: number | Uint8Array) => out.set(f, [...(out.get(f) ?? []), v]);
  while (pos.p < msg.length) {
    const key = varintAt(msg, pos);
    const f = key >>> 3;
    switch (key & 7) {
      case 0:
        add(f, varintAt(msg, pos));
        break;
      case 1:
        add(f, Buffer.from(msg.subarray(pos.p, pos.p + 8)).readDoubleLE(0));
        pos.p += 8;
        break;
      case 2: {
        const n = varintAt(msg, pos);
        add(f, msg.subarray(pos.p, pos.p + n));
        pos.p += n;
        break;
      }
      default:
        throw new Error(`bad wire type in CIFF: ${key & 7}`);
    }
  }
  return out;
}

const num = (m: Map<number, (number | Uint8Array)[]>, f: number): number => (m.get(f)?.[0] as number | undefined) ?? 0;
const str = (m: Map<number, (number | Uint8Array)[]>, f: number): string => Buffer.from((m.get(f)?.[0] as Uint8Array | undefined) ?? new Uint8Array()).toString('utf8');

export function readCiff(path: string): CiffIndex {
  const b = new Uint8Array(readFileSync(path));
  const pos = { p: 0 };
  const next = () => {
    const n = varintAt(b, pos);
    const m = b.subarray(pos.p, pos.p + n);
    pos.p += n;
    return fields(m);
  };
  const h = next();
  const header = {
    version: num(h, 1),
    numPostingsLists: num(h, 2),
    numDocs: num(h, 3),
    totalPostingsLists: num(h, 4),
    totalDocs: num(h, 5),
    totalTermsInCollection: num(h, 6),
    averageDoclength: num(h, 7),
    description: str(h, 8),
  };
  const lists: CiffIndex['lists'] = [];
  for (let i = 0; i < header.numPostingsLists; i++) {
    const m = next();
    let doc = 0;
    const postings = (m.get(4) ?? []).map((p) => {
      const pm = fields(p as Uint8Array);
      doc += num(pm, 1);
      return { docid: doc, tf: num(pm, 2) };
    });
    lists.push({ term: str(m, 1), df: num(m, 2), cf: num(m, 3), postings });
  }
  const docs: CiffIndex['docs'] = [];
  for (let i = 0; i < header.numDocs; i++) {
    const m = next();
    docs.push({ docid: num(m, 1), collectionDocid: str(m, 2), doclength: num(m, 3) });
  }
  if (pos.p !== b.length) throw new Error(`CIFF has ${b.length - pos.p} trailing bytes`);
  return { header, lists, docs };
}
