/**
 * A raw token's term: the analysis the tokenizer gives it (stemming; stopwords never get here,
 * the scanner drops them). Tokens of [a-z0-9] (nearly all of them) are stemmed from their bytes
 * in WebAssembly: the same terms as the tokenizer's analysis (test/wasm-porter.test.ts) without
 * the JS stemmer, whose compilation alone took ~150 ms of CPU in a mail build beside ~110 ms of
 * stemming; only the term becomes a string. Used wherever raw tokens become terms: the main
 * thread's BatchRemapper, and a parse worker that keeps its own lexicon (WorkerLexicon).
 */
import type { Tokenizer } from '../analysis/tokenizer.js';
import { WasmStemmer } from '../scan/wasm-ascii-table.js';
import type { RawTokenList } from '../scan/raw-token-list.js';

export type TermAnalysis = Pick<Tokenizer, 'analyzeToken' | 'isStopword' | 'options'>;

export class RawTokenTerms {
  private readonly stemmer?: WasmStemmer;

  constructor(private readonly tokenizer: TermAnalysis) {
    if (tokenizer.options.stem === 'porter') this.stemmer = new WasmStemmer();
  }

  /** The term of token `i` of `tokens`; `raw`, when the caller has it, is that token as a string. */
  termOf(tokens: RawTokenList, i: number, raw?: string): string {
    const term = this.stemmer?.stemRange(tokens.bytes, tokens.start(i), tokens.end(i));
    if (term !== undefined) return term;
    raw ??= tokens.string(i);
    const analysed = this.tokenizer.analyzeToken(raw);
    if (analysed === null) throw new Error(`a stopword reached the term dictionary: ${JSON.stringify(raw)}`);
    return analysed;
  }
}
