/**
 * Titles and snippets for the hits `gpuindex search` shows, read from the crawl at display time:
 * the index keeps no text (docs holds id, path and length), and a `title` column would change
 * index.sqlite. Each hit's document is read again from its source file with the build's readers
 * and field settings (a JSONL file up to the hit's line). A document whose file is gone, or
 * whose text no longer analyses to the length the index has (the file changed since the build),
 * gets neither title nor snippet.
 *
 * The snippet is the window of `words` whitespace-separated words with the most query terms,
 * each word analysed by the index's own tokenizer; the words holding a query term are marked.
 */
import { statSync } from 'node:fs';
import { dirname } from 'node:path';
import { readCorpusFile, type FieldNames, type SourceDocument } from '../indexer/corpus/index.js';

/** What the hits need of an index: its build settings (crawl, fields) and its analysis. */
export interface SnippetIndex {
  readonly settings: Record<string, unknown>;
  analyze(text: string): string[];
}

export interface SnippetHit {
  externalId: string;
  path: string;
  /** Terms the index holds for the document (title and text). */
  length: number;
}

export interface HitText {
  /** The document's title, or null: none, or its source could not be read again. */
  title: string | null;
  /** About `words` words of its text around the query terms, or null. */
  snippet: string | null;
}

export interface SnippetOptions {
  /** Words in a snippet. Default 30. */
  words?: number;
  /** How the part of a word that holds a query term is shown. Default `**word**`. */
  mark?: (text: string) => string;
}

const DEFAULT_WORDS = 30;
/** A longer "word" (minified code, a base64 blob, CJK text without spaces) is cut for display. */
const MAX_WORD_CHARS = 80;

/** The folder the index's paths are relative to, or undefined (documents given to the API, or the crawl is gone). */
export function crawlBase(settings: Record<string, unknown>): string | undefined {
  const input = settings.input;
  if (typeof input !== 'string' || input === '<documents>') return undefined;
  try {
    const st = statSync(input);
    return st.isFile() ? dirname(input) : st.isDirectory() ? input : undefined;
  } catch {
    return undefined;
  }
}

/** The index's title weight: absent from the settings of an index built before the option, which counted a title once. */
function titleWeight(settings: Record<string, unknown>): number {
  const w = (settings.tokenizer as { titleWeight?: unknown } | undefined)?.titleWeight;
  return typeof w === 'number' ? w : 1;
}

/** Title and snippet of each hit, in the order given. */
export async function hitTexts(index: SnippetIndex, hits: readonly SnippetHit[], query: string, options: SnippetOptions = {}): Promise<HitText[]> {
  const out: HitText[] = hits.map(() => ({ title: null, snippet: null }));
  const base = crawlBase(index.settings);
  if (!base) return out;
  const queryTerms = new Set(index.analyze(query));
  // The hits of each file, by external id (ids may repeat in a file: matched in file order).
  const byPath = new Map<string, Map<string, number[]>>();
  hits.forEach((h, i) => {
    if (!h.path) return;
    let ids = byPath.get(h.path);
    if (!ids) byPath.set(h.path, (ids = new Map()));
    const list = ids.get(h.externalId);
    if (list) list.push(i);
    else ids.set(h.externalId, [i]);
  });
  const fields = (index.settings.fields ?? undefined) as FieldNames | undefined;
  for (const [path, ids] of byPath) {
    let left = [...ids.values()].reduce((a, l) => a + l.length, 0);
    try {
      for await (const item of readCorpusFile(base, path, { fields })) {
        if (item.kind !== 'doc') continue;
        const waiting = ids.get(item.doc.externalId);
        const i = waiting?.shift();
        if (i === undefined) continue;
        out[i] = textOf(index, item.doc, hits[i]!.length, queryTerms, options);
        if (--left === 0) break;
      }
    } catch {
      // unreadable now: these hits keep no title and no snippet
    }
  }
  return out;
}

function textOf(index: SnippetIndex, doc: SourceDocument, length: number, queryTerms: ReadonlySet<string>, options: SnippetOptions): HitText {
  // The document as indexed analyses to `length` terms: the title's titleWeight times, then the text's (DocumentInverter).
  const analysed = (doc.title ? titleWeight(index.settings) * index.analyze(doc.title).length : 0) + index.analyze(doc.text).length;
  if (analysed !== length) return { title: null, snippet: null };
  const title = doc.title.replace(/\s+/g, ' ').trim();
  return { title: title || null, snippet: snippet(index, doc.text, queryTerms, options) };
}

/** The window of words with the most query terms (the first such), marked; null for an empty text. */
export function snippet(index: Pick<SnippetIndex, 'analyze'>, text: string, queryTerms: ReadonlySet<string>, options: SnippetOptions = {}): string | null {
  const size = options.words ?? DEFAULT_WORDS;
  const mark = options.mark ?? ((w: string) => `**${w}**`);
  const words = text.split(/\s+/).filter(Boolean);
  if (words.length === 0) return null;
  const isHit = new Map<string, boolean>();
  const hit = words.map((w) => {
    let h = isHit.get(w);
    if (h === undefined) isHit.set(w, (h = index.analyze(w).some((t) => queryTerms.has(t))));
    return h;
  });
  let best = 0;
  let bestHits = -1;
  let inWindow = 0;
  for (let end = 0; end < words.length; end++) {
    if (hit[end]) inWindow++;
    const start = end - size + 1;
    if (start > 0 && hit[start - 1]) inWindow--;
    if ((start >= 0 || end === words.length - 1) && inWindow > bestHits) {
      bestHits = inWindow;
      best = Math.max(0, start);
    }
  }
  const last = Math.min(words.length, best + size);
  const shown = words.slice(best, last).map((w, i) => {
    const cut = w.length > MAX_WORD_CHARS ? w.slice(0, MAX_WORD_CHARS) + '…' : w;
    return hit[best + i] ? markCore(cut, mark) : cut;
  });
  return `${best > 0 ? '… ' : ''}${shown.join(' ')}${last < words.length ? ' …' : ''}`;
}

/** Marks a word without the punctuation around it: "(whale," -> "(**whale**,". */
function markCore(word: string, mark: (text: string) => string): string {
  const m = /^([^\p{L}\p{N}]*)(.*?)([^\p{L}\p{N}]*)$/su.exec(word);
  return m && m[2] ? `${m[1]}${mark(m[2])}${m[3]}` : mark(word);
}
