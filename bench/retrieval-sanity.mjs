/**
 * Retrieval sanity: for terms sampled from a gpuindex lexicon, the set of documents gpuindex
 * lists must equal the set SQLite FTS5 finds when FTS5 is fed the token stream gpuindex
 * produced for each document (its analysed terms, space-joined), with the unicode61 tokenizer
 * and no stemming. Diacritics are kept (remove_diacritics 0) and combining marks count as token
 * characters, so unicode61 splits the stream exactly at the spaces gpuindex put there.
 *
 * Used by bench/peers.mjs (a report line on a whole corpus) and test/fts5-sanity.test.ts
 * (a small fixture). The caller opens the index (an IndexReader from src/ or dist/) and passes
 * the same documents the index was built from.
 */
import Database from 'better-sqlite3';

export const SANITY_TOKENIZER = "unicode61 remove_diacritics 0 categories 'L* N* Co M*'";

/** A small deterministic generator (mulberry32) for sampling terms. */
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Picks `count` distinct terms: a quarter among the 1,000 most frequent (by df), the rest
 * uniformly over the lexicon (mostly rare terms), deterministically for `seed`.
 */
export function sampleTerms(reader, count, seed = 1) {
  const all = [];
  for (const e of reader.lexicon()) all.push({ term: e.term, df: e.df });
  if (all.length <= count) return all.map((e) => e.term);
  const random = rng(seed);
  const picked = new Set();
  const byDf = [...all].sort((x, y) => y.df - x.df || (x.term < y.term ? -1 : 1)).slice(0, 1000);
  const frequent = Math.min(byDf.length, Math.floor(count / 4));
  while (picked.size < frequent) picked.add(byDf[Math.floor(random() * byDf.length)].term);
  while (picked.size < count) picked.add(all[Math.floor(random() * all.length)].term);
  return [...picked];
}

function keyOf(externalId, path) {
  return `${externalId}\u0000${path ?? ''}`;
}

/**
 * @param {object} o
 * @param {import('../src/reader.js').IndexReader} o.reader  the gpuindex index, opened
 * @param {Iterable<{externalId:string,path?:string,title?:string,text:string}>|AsyncIterable<...>} o.documents
 *        the documents the index was built from (e.g. readCorpus's docs, or buildIndex's input
 *        mapped to {externalId: id, path: '', title, text})
 * @param {number} [o.terms]  how many lexicon terms to check (default 200)
 * @param {string[]} [o.termList]  check these terms instead of sampling
 * @param {number} [o.seed]
 * @param {string} [o.dbPath]  where FTS5 writes its database (default: in memory)
 * @returns {Promise<object>} { ok, termsChecked, mismatches: [{term, gpuindex, fts5, onlyGpuindex, onlyFts5}], documents, ... }
 */
export async function retrievalSanity(o) {
  const t0 = performance.now();
  const { reader } = o;
  const db = new Database(o.dbPath ?? ':memory:');
  try {
    db.pragma('journal_mode = OFF');
    db.pragma('synchronous = OFF');
    db.exec(`CREATE VIRTUAL TABLE t USING fts5(terms, tokenize = "${SANITY_TOKENIZER}")`);
    // gpuindex docIds by (external id, path); a key seen twice is ambiguous and left out.
    const docIdOf = new Map();
    const ambiguous = new Set();
    for (const d of reader.documents()) {
      const k = keyOf(d.externalId, d.path);
      if (docIdOf.has(k)) ambiguous.add(k);
      else docIdOf.set(k, d);
    }
    const insert = db.prepare('INSERT INTO t(rowid, terms) VALUES (?, ?)');
    let documents = 0;
    let notInIndex = 0;
    let lengthMismatches = 0;
    let tokens = 0;
    const lengthExamples = [];
    const terms = [];
    const push = (t) => terms.push(t);
    db.exec('BEGIN');
    const titleWeight = reader.settings.tokenizer?.titleWeight ?? 1;
    for await (const doc of o.documents) {
      const k = keyOf(doc.externalId, doc.path);
      const stored = docIdOf.get(k);
      if (!stored) {
        notInIndex++;
        continue;
      }
      if (ambiguous.has(k)) continue;
      terms.length = 0;
      // The index's stream: the title's terms titleWeight times (BM25F's weight, folded in), then the text's.
      if (doc.title) for (let c = 0; c < titleWeight; c++) reader.analyze(doc.title).forEach(push);
      reader.analyze(doc.text ?? '').forEach(push);
      if (terms.length !== stored.length) {
        lengthMismatches++;
        if (lengthExamples.length < 5) lengthExamples.push({ externalId: doc.externalId, gpuindex: stored.length, analysed: terms.length });
      }
      tokens += terms.length;
      insert.run(stored.docId, terms.join(' '));
      documents++;
    }
    db.exec('COMMIT');
    const tLoaded = performance.now();
    const sample = o.termList ?? sampleTerms(reader, o.terms ?? 200, o.seed ?? 1);
    const query = db.prepare('SELECT rowid FROM t WHERE t MATCH ? ORDER BY rowid').pluck();
    const mismatches = [];
    let postingsCompared = 0;
    for (const term of sample) {
      const g = new Set();
      for (const d of reader.postingsOf(term).docIds) {
        const doc = reader.document(d);
        if (doc && !ambiguous.has(keyOf(doc.externalId, doc.path))) g.add(d);
      }
      const f = new Set(query.all(`"${term.replaceAll('"', '""')}"`));
      postingsCompared += g.size;
      const onlyG = [...g].filter((d) => !f.has(d));
      const onlyF = [...f].filter((d) => !g.has(d));
      if (onlyG.length || onlyF.length)
        mismatches.push({ term, gpuindex: g.size, fts5: f.size, onlyGpuindex: onlyG.slice(0, 5), onlyFts5: onlyF.slice(0, 5) });
    }
    return {
      ok: mismatches.length === 0 && notInIndex === 0 && lengthMismatches === 0,
      termsChecked: sample.length,
      postingsCompared,
      mismatches,
      documents,
      tokens,
      notInIndex,
      ambiguousKeys: ambiguous.size,
      lengthMismatches,
      lengthExamples,
      loadMs: Math.round(tLoaded - t0),
      queryMs: Math.round(performance.now() - tLoaded),
      tokenizer: SANITY_TOKENIZER,
    };
  } finally {
    db.close();
  }
}

/** One line for a report. */
export function formatSanity(r) {
  const head = r.ok ? 'PASS' : 'FAIL';
  const parts = [
    `${head}: ${r.termsChecked} sampled terms, ${r.postingsCompared.toLocaleString('en-US')} postings: gpuindex doc sets ${r.mismatches.length === 0 ? '=' : '!='} FTS5 (${r.tokenizer}) on gpuindex's token streams`,
    `${r.documents.toLocaleString('en-US')} documents, ${r.tokens.toLocaleString('en-US')} tokens`,
  ];
  if (r.mismatches.length) parts.push(`${r.mismatches.length} term(s) differ, e.g. ${r.mismatches.slice(0, 3).map((m) => `${JSON.stringify(m.term)} ${m.gpuindex} vs ${m.fts5}`).join(', ')}`);
  if (r.notInIndex) parts.push(`${r.notInIndex} document(s) not in the index`);
  if (r.lengthMismatches) parts.push(`${r.lengthMismatches} document length(s) differ from the index's`);
  if (r.ambiguousKeys) parts.push(`${r.ambiguousKeys} duplicate (id, path) key(s) left out`);
  return parts.join('; ');
}
