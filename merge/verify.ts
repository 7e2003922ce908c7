/**
 * `gpuindex verify`: checks an index and stops at the first damage with a precise message.
 *  1. MANIFEST.json lists every file; each file's size and SHA-256 match.
 *  2. postings.bin starts with its magic; every lexicon entry's list lies inside the file,
 *     lists do not overlap, and each decodes to exactly df postings with strictly increasing
 *     docIDs below the document count, tfs >= 1 summing to cf.
 *  3. The document table holds docIDs 0 .. N-1 and the statistics agree with it.
 */
import { closeSync, existsSync, openSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { INDEX_DB, POSTINGS_FILE } from './index-store.js';
import { MANIFEST_FILE, readManifest, sha256OfFile } from './manifest.js';
import { decodePostings } from './postings-codec.js';
import { POSTINGS_MAGIC } from './postings-file.js';

export class IndexDamage extends Error {
  override readonly name = 'IndexDamage';
}

export interface VerifyReport {
  files: number;
  terms: number;
  postings: number;
  documents: number;
}

const damage = (msg: string): never => {
  throw new IndexDamage(msg);
};

export function verifyIndex(dir: string): VerifyReport {
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
    if (stats.documents !== documents.n) damage(`stats: documents = ${stats.documents}, the document table has ${documents.n}`);
    let terms = 0;
    let postings = 0;
    let end = POSTINGS_MAGIC.length;
    const rows = db.prepare('SELECT term, term_id AS termId, df, cf, offset, length FROM terms ORDER BY offset').iterate() as Iterable<{ term: string; termId: number; df: number; cf: number; offset: number; length: number }>;
    for (const e of rows) {
      const where = `term ${JSON.stringify(e.term)} (termID ${e.termId})`;
      if (e.offset < end) damage(`${where}: list at ${e.offset} overlaps the previous list (ends at ${end})`);
      if (e.offset + e.length > postingsBytes) damage(`${where}: list ${e.offset}+${e.length} runs past the end of ${POSTINGS_FILE} (${postingsBytes} bytes)`);
      if (e.df < 1 || e.length < 2 * e.df) damage(`${where}: df ${e.df} does not fit ${e.length} bytes`);
      const buf = Buffer.alloc(e.length);
      readSync(fd, buf, 0, e.length, e.offset);
      let list;
      try {
        list = decodePostings(buf, e.df);
      } catch (err) {
        return damage(`${where}: postings do not decode (${(err as Error).message})`);
      }
      let cf = 0;
      for (let i = 0; i < e.df; i++) {
        const d = list.docIds[i]!;
        if (i > 0 && d <= list.docIds[i - 1]!) damage(`${where}: docID ${d} at position ${i} does not increase (previous ${list.docIds[i - 1]})`);
        if (d >= documents.n) damage(`${where}: docID ${d} is not in the document table (${documents.n} documents)`);
        if (list.tfs[i]! < 1) damage(`${where}: tf 0 at docID ${d}`);
        cf += list.tfs[i]!;
      }
      if (cf !== e.cf) damage(`${where}: cf is ${e.cf} in the lexicon, ${cf} in the postings`);
      end = e.offset + e.length;
      terms++;
      postings += e.df;
    }
    if (end !== postingsBytes) damage(`${POSTINGS_FILE}: ${postingsBytes - end} bytes after the last list`);
    if (stats.terms !== terms) damage(`stats: terms = ${stats.terms}, the lexicon has ${terms}`);
    if (stats.postings !== postings) damage(`stats: postings = ${stats.postings}, the lists hold ${postings}`);
    return { files: Object.keys(manifest.files).length, terms, postings, documents: documents.n };
  } catch (err) {
    if (err instanceof IndexDamage) throw err;
    throw new IndexDamage(`index.sqlite: ${(err as Error).message}`);
  } finally {
    db.close();
    closeSync(fd);
  }
}
