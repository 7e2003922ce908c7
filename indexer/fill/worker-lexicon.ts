/**
 * A parse worker's own term dictionary: the raw tokens its scanner numbers, analysed (stemmed)
 * here and numbered by term in order of first sight in this worker. Blocks the worker fills
 * are keyed by these ids and sorted by their ranks in code point order (lexKeys), and at the
 * end the merge unites the workers' lexicons by term (mergeLexicons): no thread sees every
 * term or every pair, and no dictionary holds the whole crawl's vocabulary.
 */
import { TermDictionary } from './dictionary.js';
import { RawTokenTerms, type TermAnalysis } from './raw-token-terms.js';
import { RawTokenList } from '../scan/raw-token-list.js';
import type { LocalTerms } from '../scan/document-inverter.js';
import { grown } from '../../runtime/grown.js';
import { byteLexicon, type ByteLexicon } from '../../merge/lexicon-union.js';

export interface FinishedLexicon {
  /** The worker's terms in code point order, as UTF-8 in shared memory (the union's threads read them as they are). */
  terms: ByteLexicon;
  /** Its term ids in that order (TermDictionary.order): what its runs' keys walk. */
  order: Uint32Array;
}

export class WorkerLexicon {
  readonly dictionary = new TermDictionary();
  private readonly analysis: RawTokenTerms;
  /** The term id of each raw token id the scanner has given (raw ids below `known`). */
  private termOfRaw = new Uint32Array(1024);
  private known = 0;

  constructor(
    tokenizer: TermAnalysis,
    private readonly localTerms: LocalTerms,
  ) {
    this.analysis = new RawTokenTerms(tokenizer);
  }

  /** Raw token id -> term id, for every raw id given so far (a view: valid until the next call). */
  termIds(): Uint32Array {
    const count = this.localTerms.count;
    if (count > this.known) {
      // Only the new raw tokens' bytes are kept, and only until they are analysed.
      const fresh = new RawTokenList();
      fresh.append(this.localTerms.takeUnsent());
      if (count > this.termOfRaw.length) this.termOfRaw = grown(this.termOfRaw, count);
      for (let i = this.known; i < count; i++) this.termOfRaw[i] = this.dictionary.idOf(this.analysis.termOf(fresh, i - this.known));
      this.known = count;
    }
    return this.termOfRaw;
  }

  /** The lexicon in code point order, for the merge. */
  finish(): FinishedLexicon {
    const order = this.dictionary.order();
    const all = this.dictionary.terms;
    const sorted = new Array<string>(order.length);
    for (let p = 0; p < order.length; p++) sorted[p] = all[order[p]!]!;
    return { terms: byteLexicon(sorted, true), order };
  }
}
