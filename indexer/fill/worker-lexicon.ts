/**
 * A parse worker's own term dictionary: the raw tokens its scanner numbers, analysed (stemmed)
 * here and numbered by term in order of first sight in this worker. Blocks the worker fills
 * are keyed by these ids and sorted by their ranks in code point order (lexKeys), and at the
 * end the merge unites the workers' lexicons by term (mergeLexicons): no thread sees every
 * term or every pair, and no dictionary holds the whole crawl's vocabulary.
 *
 * A lexicon that outgrows the worker's share of --memory is closed as a generation: its blocks
 * are sealed, its terms written to disk (merge/spilled-lexicon.ts), and a new one starts empty
 * (restart). The merge unites generations as it unites workers, so a worker's vocabulary is
 * bounded by disk, not memory, and the index is the same whatever the generations.
 */
import { TermDictionary } from './dictionary.js';
import { RawTokenTerms, type TermAnalysis } from './raw-token-terms.js';
import type { LocalTerms } from '../scan/document-inverter.js';
import { grown } from '../../runtime/grown.js';
import { byteLexicon, type ByteLexicon } from '../../merge/lexicon-union.js';
import { workerLexiconBytes } from '../plan/dictionary-bytes.js';

export interface FinishedLexicon {
  /** The worker's terms in code point order, as UTF-8 (in shared memory unless spilled: the union's threads read them as they are). */
  terms: ByteLexicon;
  /** Its term ids in that order (TermDictionary.order): what its runs' keys walk. */
  order: Uint32Array;
}

export class WorkerLexicon {
  dictionary = new TermDictionary();
  /** Generations closed before this one: the number of the one filling now. */
  generation = 0;
  private readonly analysis: RawTokenTerms;
  /** The term id of each raw token id the scanner has given (raw ids below `known`). */
  private termOfRaw = new Uint32Array(1024);
  private known = 0;
  /** UTF-16 units of this generation's terms (its strings' share of `bytes`). */
  private termUnits = 0;

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
      if (count > this.termOfRaw.length) this.termOfRaw = grown(this.termOfRaw, count);
      // Only the new raw tokens' bytes are kept, and only until they are analysed (read in place).
      this.localTerms.useUnsent((fresh) => {
        const dictionary = this.dictionary;
        for (let i = this.known; i < count; i++) {
          const term = this.analysis.termOf(fresh, i - this.known);
          const before = dictionary.size;
          const id = dictionary.idOf(term);
          if (id === before) this.termUnits += term.length;
          this.termOfRaw[i] = id;
        }
      });
      this.known = count;
    }
    return this.termOfRaw;
  }

  /** Estimated heap bytes of this generation, with the scanner's raw-token tables (`scanBytes`). */
  bytes(scanBytes: number): number {
    return workerLexiconBytes(this.dictionary.size, this.termUnits, scanBytes) + 4 * this.termOfRaw.length;
  }

  /** The lexicon in code point order, for the merge (`shared`: its terms in shared memory). */
  finish(shared = true): FinishedLexicon {
    const order = this.dictionary.order();
    const all = this.dictionary.terms;
    const sorted = new Array<string>(order.length);
    for (let p = 0; p < order.length; p++) sorted[p] = all[order[p]!]!;
    return { terms: byteLexicon(sorted, shared), order };
  }

  /**
   * Starts the next generation, empty. The caller has sealed every block keyed by this one and
   * taken its lexicon (finish), and restarts the raw-token numbering with it
   * (DocumentInverter.forgetRawTokens, LocalTerms.restart): raw ids from 0 again.
   */
  restart(): void {
    this.dictionary = new TermDictionary();
    this.generation++;
    this.termOfRaw = new Uint32Array(1024);
    this.known = 0;
    this.termUnits = 0;
  }
}
