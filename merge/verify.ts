/**
 * `gpuindex verify`: checks an index and stops at the first damage with a precise message.
 *  1. MANIFEST.json lists every file; each file's size and SHA-256 match.
 *  2. postings.bin starts with its magic; the lexicon (lexicon.bin, or in formats 2 and 3 the
 *     terms table holding termIDs 0 .. T-1 and term_stats the figures of each) decodes whole, its
 *     terms in code point order; the lists lie back to back in termID order inside the file, and
 *     each decodes to exactly df postings with strictly increasing docIDs below the document
 *     count, tfs >= 1 summing to cf.
 *  3. The document table holds docIDs 0 .. N-1 and the statistics agree with it.
 *  4. positions.bin, where the manifest lists it: each list's postings have positions adding
 *     up to their tf (a title position counted titleWeight times), strictly increasing, none at
 *     a title's end (the gap before the text), and each term's positions end where the next
 *     term's start.
 * A segmented index (segments.json): its fields of the right types and a format this gpuindex
 * reads, each segment so, and what the file records of each (figures, deletes file, analysis
 * settings) as the segment has it.
 */
import { closeSync, existsSync, openSync, readFileSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { INDEX_DB, POSTINGS_FILE, READABLE_INDEX_FORMATS, readableFormats } from './index-store.js';
import { compareTerms } from './term-order.js';
import { MANIFEST_FILE, readManifest, sha256OfFile } from './manifest.js';
import { decodePostings } from './postings-codec.js';
import { POSTINGS_MAGIC } from './postings-file.js';
import { TERM_STATS_CHUNK, TermStatsReader } from './term-stats.js';
import { segmentsFileDamage, SEGMENTS_FILE, type SegmentsManifest } from './segments.js';
import { IMPACTS_FILE, readImpacts } from './impacts.js';
import { computeImpacts } from './segment-impacts.js';
import { SegmentReader } from './segment-reader.js';
import { PositionsFile, POSITIONS_FILE } from './positions-file.js';
import { LEXICON_FILE } from './lexicon-file.js';
import { LexiconFileError, LexiconFileReader } from './lexicon-file-reader.js';

export class IndexDamage extends Error {
  override readonly name = 'IndexDamage';
}

export interface VerifyReport {
  files: number;
  terms: number;
  postings: number;
  documents: number;
  /** Segments checked, for a segmented index. */
  segments?: number;
}

const damage = (msg: string): never => {
  throw new IndexDamage(msg);
};

/**
 * Checks an index: its one segment, or, where segments.json lists several, its fields
 * (segmentsFileDamage), each segment, and what the file records of each (a damage message names
 * the segment, or segments.json and its field).
 */
export function verifyIndex(dir: string): VerifyReport {
  const segments = checkedSegmentsFile(dir);
  if (!segments) return verifySegment(dir);
  const total: VerifyReport = { files: 1, terms: 0, postings: 0, documents: 0, segments: segments.segments.length };
  for (const [i, entry] of segments.segments.entries()) {
    const segDir = join(dir, entry.name);
    if (!existsSync(segDir)) damage(`${SEGMENTS_FILE}: segments[${i}].name: ${entry.name} is missing`);
    let r: VerifyReport;
    try {
      r = verifySegment(segDir);
    } catch (err) {
      if (err instanceof IndexDamage) damage(`${entry.name}: ${err.message}`);
      throw err;
    }
    checkEntry(dir, segments, i, r);
    total.files += r.files;
    total.postings += r.postings;
    total.documents += r.documents;
    total.terms += r.terms;
  }
  return total;
}

/** segments.json, its fields checked; undefined for a one-segment index. */
function checkedSegmentsFile(dir: string): SegmentsManifest | undefined {
  const path = join(dir, SEGMENTS_FILE);
  if (!existsSync(path)) return undefined;
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    return damage(`${SEGMENTS_FILE}: unreadable (${(err as Error).message})`);
  }
  let m: unknown;
  try {
    m = JSON.parse(text);
  } catch (err) {
    return damage(`${SEGMENTS_FILE}: not JSON (${(err as Error).message})`);
  }
  const why = segmentsFileDamage(m);
  if (why) damage(`${SEGMENTS_FILE}: ${why}`);
  return m as SegmentsManifest;
}

/** What segments.json records of segment `i` (verified: `r`) against the segment: figures, deletes file, analysis settings. */
function checkEntry(dir: string, m: SegmentsManifest, i: number, r: VerifyReport): void {
  const entry = m.segments[i]!;
  const at = `segments[${i}]`;
  const segment = new SegmentReader(join(dir, entry.name));
  try {
    const holds = { documents: r.documents, totalTokens: segment.stats.totalTokens, terms: r.terms, postings: r.postings };
    for (const key of ['documents', 'totalTokens', 'terms', 'postings'] as const)
      if (entry[key] !== holds[key]) damage(`${SEGMENTS_FILE}: ${at}.${key}: ${entry[key]}, ${entry.name} holds ${holds[key]}`);
    if (entry.deletes !== undefined) checkDeletes(dir, m, i);
    if (m.settings) checkSettings(m.settings, entry.name, segment.settings);
  } finally {
    segment.close();
  }
}

/**
 * A segment's deletes file (merge/deletes.ts): there, ascending docIDs of the segment, as many as
 * segments.json says, and not newer than the file: the writer names it for the commit to come.
 */
function checkDeletes(dir: string, m: SegmentsManifest, i: number): void {
  const entry = m.segments[i]!;
  const at = `segments[${i}]`;
  const file = join(entry.name, entry.deletes!);
  const written = /^deletes-(\d+)-\d+\.bin$/.exec(entry.deletes!);
  if (written && Number(written[1]) > m.generation) damage(`${SEGMENTS_FILE}: generation: ${m.generation}, but ${at}.deletes is ${entry.deletes}, written for generation ${written[1]}`);
  if (!existsSync(join(dir, file))) damage(`${SEGMENTS_FILE}: ${at}.deletes: ${file} is missing`);
  const bytes = readFileSync(join(dir, file));
  if (bytes.length % 4 !== 0) damage(`${file}: ${bytes.length} bytes, not a whole number of docIDs`);
  const ids = new Uint32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));
  for (let k = 0; k < ids.length; k++) {
    if (ids[k]! >= entry.documents) damage(`${file}: docID ${ids[k]} is past the segment's ${entry.documents} documents`);
    if (k > 0 && ids[k]! <= ids[k - 1]!) damage(`${file}: docID ${ids[k]} at position ${k} does not increase (previous ${ids[k - 1]})`);
  }
  if (entry.deleted !== undefined && entry.deleted !== ids.length) damage(`${SEGMENTS_FILE}: ${at}.deleted: ${entry.deleted}, ${file} holds ${ids.length}`);
}

/** segments.json's analysis settings against those a segment was built with: the writer builds every segment with them. */
function checkSettings(said: Record<string, unknown>, name: string, built: Record<string, unknown>): void {
  const pairs: [string, unknown, unknown][] = [
    ['tokenizer', said.tokenizer, built.tokenizer],
    ['fields', said.fields, built.fields ?? null],
    // Absent: the index stores positions as its segments do (src/writer.ts positionsOf).
    ['positions', said.positions, built.positions === true],
  ];
  for (const [key, expected, actual] of pairs)
    if (expected !== undefined && canonical(expected) !== canonical(actual)) damage(`${SEGMENTS_FILE}: settings.${key}: ${canonical(expected)}, ${name} was built with ${canonical(actual)}`);
}

/** JSON with every object's keys sorted: settings equal whatever order they were written in. */
function canonical(v: unknown): string {
  return JSON.stringify(v, (_, x: unknown) => (typeof x === 'object' && x !== null && !Array.isArray(x) ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : x)) ?? 'undefined';
}

function verifySegment(dir: string): VerifyReport {
  if (!existsSync(join(dir, MANIFEST_FILE))) damage(`${MANIFEST_FILE} is missing: not a complete gpuindex index`);
  let manifest;
  try {
    manifest = readManifest(dir);
  } catch (err) {
    return damage(`${MANIFEST_FILE} is unreadable: ${(err as Error).message}`);
  }
  for (const name of [INDEX_DB, POSTINGS_FILE]) if (!manifest.files[name]) damage(`${MANIFEST_FILE} does not list ${name}`);
  for (const [name, expected] of Object.entries(manifest.files)) {
    const path = join(dir, name);
    if (!existsSync(path)) damage(`${name} is missing`);
    const bytes = statSync(path).size;
    if (bytes !== expected.bytes) damage(`${name}: ${bytes} bytes, the manifest says ${expected.bytes}`);
    const sha = sha256OfFile(path);
    if (sha !== expected.sha256) damage(`${name}: checksum mismatch (sha256 ${sha.slice(0, 16)}…, expected ${expected.sha256.slice(0, 16)}…)`);
  }

  const db = new Database(join(dir, INDEX_DB), { readonly: true, fileMustExist: true });
  const fd = openSync(join(dir, POSTINGS_FILE), 'r');
  try {
    const postingsBytes = statSync(join(dir, POSTINGS_FILE)).size;
    const magic = Buffer.alloc(POSTINGS_MAGIC.length);
    readSync(fd, magic, 0, magic.length, 0);
    if (!magic.equals(POSTINGS_MAGIC)) damage(`${POSTINGS_FILE}: bad magic`);
    const documents = (db.prepare('SELECT COUNT(*) AS n, MIN(doc_id) AS lo, MAX(doc_id) AS hi FROM docs').get() as { n: number; lo: number | null; hi: number | null });
    if (documents.n > 0 && (documents.lo !== 0 || documents.hi !== documents.n - 1)) damage(`docs: docIDs are not 0 .. ${documents.n - 1} (found ${documents.lo} .. ${documents.hi})`);
    const stats = Object.fromEntries((db.prepare('SELECT key, value FROM stats').all() as { key: string; value: number }[]).map((r) => [r.key, r.value]));
    if (!READABLE_INDEX_FORMATS.includes(stats.formatVersion)) damage(`stats: index format ${stats.formatVersion ?? '?'}, this gpuindex reads formats ${readableFormats()}: build the index again`);
    if (stats.documents !== documents.n) damage(`stats: documents = ${stats.documents}, the document table has ${documents.n}`);
    // The positions (--positions) are checked list by list, against the stats' term count.
    const positions = manifest.files[POSITIONS_FILE] ? openPositions(dir, documents.n, stats.terms) : undefined;
    const lexicon = stats.formatVersion >= 4 ? verifyLexiconFile(dir, fd, postingsBytes, documents.n, positions) : verifySqliteLexicon(db, fd, postingsBytes, documents.n, stats.formatVersion, positions);
    const { terms, postings, end } = lexicon;
    if (end !== postingsBytes) damage(`${POSTINGS_FILE}: ${postingsBytes - end} bytes after the last list`);
    if (stats.terms !== terms) damage(`stats: terms = ${stats.terms}, the lexicon has ${terms}`);
    if (stats.postings !== postings) damage(`stats: postings = ${stats.postings}, the lists hold ${postings}`);
    if (manifest.files[IMPACTS_FILE]) verifyImpacts(dir, terms);
    return { files: Object.keys(manifest.files).length, terms, postings, documents: documents.n };
  } catch (err) {
    if (err instanceof IndexDamage) throw err;
    throw new IndexDamage(`index.sqlite: ${(err as Error).message}`);
  } finally {
    db.close();
    closeSync(fd);
    positionsOpen?.close();
    positionsOpen = undefined;
  }
}

let positionsOpen: PositionsFile | undefined;

function openPositions(dir: string, documents: number, terms: number): PositionsFile {
  try {
    positionsOpen = new PositionsFile(join(dir, POSITIONS_FILE));
  } catch (err) {
    return damage(`${POSITIONS_FILE}: ${(err as Error).message}`);
  }
  if (positionsOpen.documents !== documents || positionsOpen.terms !== terms) damage(`${POSITIONS_FILE}: holds ${positionsOpen.documents} documents and ${positionsOpen.terms} terms, the index ${documents} and ${terms}`);
  return positionsOpen;
}

/** One term's positions against its postings (see 4. above). */
function verifyPositions(file: PositionsFile, termId: number, list: { docIds: Uint32Array; tfs: Uint32Array }, where: () => string): void {
  const cursor = file.cursor(termId, list);
  for (let k = 0; k < list.docIds.length; k++) {
    let p: Uint32Array;
    try {
      p = cursor.positionsOf(k);
    } catch (err) {
      return damage(`${POSITIONS_FILE}: ${where()}: ${(err as Error).message}`);
    }
    const d = list.docIds[k]!;
    const title = file.titleLengths[d]!;
    if (p.length < 1 || p.length > list.tfs[k]!) damage(`${POSITIONS_FILE}: ${where()}: ${p.length} positions at docID ${d}, whose tf is ${list.tfs[k]}`);
    for (let i = 0; i < p.length; i++) {
      if (i > 0 && p[i]! <= p[i - 1]!) damage(`${POSITIONS_FILE}: ${where()}: positions at docID ${d} do not increase (${p[i - 1]} then ${p[i]})`);
      if (title > 0 && p[i] === title) damage(`${POSITIONS_FILE}: ${where()}: position ${title} at docID ${d} is the gap after its title`);
      if (file.ends && p[i]! >= file.ends[d]!) damage(`${POSITIONS_FILE}: ${where()}: position ${p[i]} at docID ${d} is past its document's bound ${file.ends[d]}`);
    }
  }
  if (!cursor.atEnd) damage(`${POSITIONS_FILE}: ${where()}: bytes left after its ${list.docIds.length} postings`);
}

/** Formats 2 and 3: the terms table holds termIDs 0 .. T-1 (format 3: in code point order), term_stats the figures of each. */
function verifySqliteLexicon(db: Database.Database, fd: number, postingsBytes: number, documents: number, formatVersion: number, positions?: PositionsFile): ListChecker {
  const lists = new ListChecker(fd, postingsBytes, documents, positions);
  const termRows = db.prepare('SELECT COUNT(*) AS n, MIN(term_id) AS lo, MAX(term_id) AS hi FROM terms').get() as { n: number; lo: number | null; hi: number | null };
  if (termRows.n > 0 && (termRows.lo !== 0 || termRows.hi !== termRows.n - 1)) damage(`terms: termIDs are not 0 .. ${termRows.n - 1} (found ${termRows.lo} .. ${termRows.hi})`);
  // Format 3: termIDs are ranks in code point order.
  if (formatVersion >= 3) {
    let previous: string | undefined;
    let id = 0;
    for (const term of db.prepare('SELECT term FROM terms ORDER BY term_id').pluck().iterate() as Iterable<string>) {
      if (previous !== undefined && compareTerms(previous, term) >= 0) damage(`terms: termID ${id} (${JSON.stringify(term)}) does not follow termID ${id - 1} (${JSON.stringify(previous)}) in code point order`);
      previous = term;
      id++;
    }
  }
  const termOf = db.prepare('SELECT term FROM terms WHERE term_id = ?').pluck();
  const where = (termId: number) => {
    const term = termOf.get(termId) as string | undefined;
    return term === undefined ? `termID ${termId} (no row in terms)` : `term ${JSON.stringify(term)} (termID ${termId})`;
  };
  // The figures, in termID order: the lists lie back to back in that order. One row at a
  // time (no statement left open: the term lookups for messages share the connection).
  const figures = new TermStatsReader(db);
  const chunks = figures.rowCount();
  if (chunks !== Math.ceil(termRows.n / TERM_STATS_CHUNK)) damage(`term_stats: ${chunks} rows for ${termRows.n} terms (${TERM_STATS_CHUNK} a row)`);
  for (let first = 0; first < termRows.n; first += TERM_STATS_CHUNK) {
    let c;
    try {
      c = figures.chunkAt(first);
    } catch (err) {
      return damage(`term_stats: ${(err as Error).message}`);
    }
    if (!c) return damage(`term_stats: no row for termIDs ${first} ..`);
    if (c.df.length !== Math.min(TERM_STATS_CHUNK, termRows.n - first)) damage(`term_stats: the row of termID ${first} holds ${c.df.length} terms, expected ${Math.min(TERM_STATS_CHUNK, termRows.n - first)}`);
    for (let i = 0; i < c.df.length; i++) {
      const e = { termId: c.firstTermId + i, df: c.df[i]!, cf: c.cf[i]!, offset: c.offset[i]!, length: c.length[i]! };
      lists.check(e, where(e.termId));
    }
  }
  if (lists.terms !== termRows.n) damage(`term_stats: figures for ${lists.terms} terms, the terms table has ${termRows.n}`);
  return lists;
}

/** Format 4: lexicon.bin decodes whole (each block its terms, in code point order, at its first list; lexicon-file-reader.ts), and each list checks out. */
function verifyLexiconFile(dir: string, fd: number, postingsBytes: number, documents: number, positions?: PositionsFile): ListChecker {
  if (!existsSync(join(dir, LEXICON_FILE))) damage(`${LEXICON_FILE} is missing`);
  const lists = new ListChecker(fd, postingsBytes, documents, positions);
  let file;
  try {
    file = new LexiconFileReader(join(dir, LEXICON_FILE));
  } catch (err) {
    return damage((err as Error).message.replace(`${join(dir, LEXICON_FILE)}: `, `${LEXICON_FILE}: `));
  }
  try {
    file.scan(POSTINGS_MAGIC.length, (term, termId, df, cf, offset, length) => lists.check({ termId, df, cf, offset, length }, `term ${JSON.stringify(term)} (termID ${termId})`));
  } catch (err) {
    if (err instanceof LexiconFileError) damage(err.message.replace(`${join(dir, LEXICON_FILE)}: `, `${LEXICON_FILE}: `));
    throw err;
  } finally {
    file.close();
  }
  return lists;
}

/** Checks lists in termID order: back to back inside postings.bin, each decoding to df postings of rising docIDs below the document count, tfs >= 1 summing to cf. */
class ListChecker {
  terms = 0;
  postings = 0;
  end = POSTINGS_MAGIC.length;

  constructor(
    private readonly fd: number,
    private readonly postingsBytes: number,
    private readonly documents: number,
    private readonly positions?: PositionsFile,
  ) {}

  check(e: { termId: number; df: number; cf: number; offset: number; length: number }, where: string): void {
    const { postingsBytes, documents } = this;
    if (e.offset !== this.end) damage(`${where}: list at ${e.offset}, the previous list ends at ${this.end}`);
    if (e.offset + e.length > postingsBytes) damage(`${where}: list ${e.offset}+${e.length} runs past the end of ${POSTINGS_FILE} (${postingsBytes} bytes)`);
    if (e.df < 1 || e.length < 2 * e.df) damage(`${where}: df ${e.df} does not fit ${e.length} bytes`);
    const buf = Buffer.alloc(e.length);
    readSync(this.fd, buf, 0, e.length, e.offset);
    let list;
    try {
      list = decodePostings(buf, e.df);
    } catch (err) {
      return damage(`${where}: postings do not decode (${(err as Error).message})`);
    }
    let cf = 0;
    for (let k = 0; k < e.df; k++) {
      const d = list.docIds[k]!;
      if (k > 0 && d <= list.docIds[k - 1]!) damage(`${where}: docID ${d} at position ${k} does not increase (previous ${list.docIds[k - 1]})`);
      if (d >= documents) damage(`${where}: docID ${d} is not in the document table (${documents} documents)`);
      if (list.tfs[k]! < 1) damage(`${where}: tf 0 at docID ${d}`);
      cf += list.tfs[k]!;
    }
    if (cf !== e.cf) damage(`${where}: cf is ${e.cf} in the lexicon, ${cf} in the postings`);
    if (this.positions) verifyPositions(this.positions, e.termId, list, () => where);
    this.end = e.offset + e.length;
    this.terms++;
    this.postings += e.df;
  }
}

/** impacts.bin against the impacts of the postings as they are (a second pass over them). */
function verifyImpacts(dir: string, terms: number): void {
  const stored = readImpacts(dir, terms, (why) => new IndexDamage(`${IMPACTS_FILE}: ${why}`))!;
  const segment = new SegmentReader(dir);
  try {
    const fresh = computeImpacts(segment);
    for (const key of ['firstBlock', 'lastDoc', 'gapsAt', 'tfsAt', 'firstPair', 'pairTf', 'pairLength'] as const) {
      const a = stored[key];
      const b = fresh[key];
      if (a.length !== b.length) damage(`${IMPACTS_FILE}: ${key} holds ${a.length} entries, the postings give ${b.length}`);
      for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) damage(`${IMPACTS_FILE}: ${key}[${i}] is ${a[i]}, the postings give ${b[i]}`);
    }
  } finally {
    segment.close();
  }
}
