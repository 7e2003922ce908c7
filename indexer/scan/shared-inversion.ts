/**
 * Term analysis kept from one build to the next, for a thread that builds many small indexes
 * with one analysis (a live writer's segments, one a second). Each new build's dictionary starts
 * empty, so without this every segment scanned its raw tokens into a cold table, stemmed them
 * and made and hashed their strings again: a third of the feed thread's time on the 1 M-document
 * stream. Here one DocumentInverter numbers terms once for all builds (shared ids), and each
 * build maps a shared id to its own TermId the first time its pairs hold it: the same TermIds,
 * in the same first-occurrence order, as a fresh inverter gives.
 */
import type { Tokenizer } from '../analysis/tokenizer.js';
import { TermDictionary } from '../fill/dictionary.js';
import { grown } from '../../runtime/grown.js';
import { analysedTermIds, DocumentInverter } from './document-inverter.js';

/** Past this many shared terms the next build starts the numbering afresh (bounds the memory held between builds). */
const MAX_SHARED_TERMS = 1 << 20;

export class SharedInversion {
  private analysis?: string;
  private dictionary = new TermDictionary();
  private inverter?: DocumentInverter;
  /** A build's parse holds the inverter (its views of TermIds must not be overwritten by another's). */
  private held = false;

  /**
   * The inverter for a build with `tokenizer`, and the map of its shared ids to the build's
   * `dictionary`, until end(); undefined while another build's parse holds them (that build
   * then inverts on its own).
   */
  begin(tokenizer: Tokenizer, dictionary: TermDictionary): { inverter: DocumentInverter; termIds: BuildTermIds; end: () => void } | undefined {
    if (this.held) return undefined;
    this.held = true;
    const analysis = JSON.stringify(tokenizer.options);
    if (!this.inverter || analysis !== this.analysis || this.dictionary.size > MAX_SHARED_TERMS) {
      this.analysis = analysis;
      this.dictionary = new TermDictionary();
      this.inverter = new DocumentInverter(tokenizer, analysedTermIds(tokenizer, this.dictionary));
    }
    return { inverter: this.inverter, termIds: new BuildTermIds(this.dictionary, dictionary), end: () => (this.held = false) };
  }
}

/**
 * One build's TermIds of shared ids, given on first sight (-1: not seen yet). The build's
 * dictionary takes its code point order from the shared terms' order (each shared term is
 * sorted once, not once a segment).
 */
export class BuildTermIds {
  private ids = new Int32Array(1 << 12).fill(-1);

  constructor(
    private readonly shared: TermDictionary,
    private readonly dictionary: TermDictionary,
  ) {
    dictionary.orderFrom(() => this.order());
  }

  /** The build's TermIds in code point order: the shared order, less the terms the build has not seen. */
  private order(): Uint32Array<ArrayBuffer> {
    const out = new Uint32Array(this.dictionary.size);
    const ids = this.ids;
    let k = 0;
    for (const s of this.shared.order()) {
      const id = s < ids.length ? ids[s]! : -1;
      if (id >= 0) out[k++] = id;
    }
    if (k !== out.length) throw new Error(`shared term order: ${k} of the build's ${out.length} terms found`);
    return out;
  }

  /** Replaces each shared id of `termIds` by the build's TermId, in place. */
  apply(termIds: Uint32Array): void {
    let ids = this.ids;
    for (let i = 0; i < termIds.length; i++) {
      const shared = termIds[i]!;
      if (shared >= ids.length) {
        const n = ids.length;
        this.ids = ids = grown(ids, shared + 1);
        ids.fill(-1, n);
      }
      let id = ids[shared]!;
      if (id < 0) ids[shared] = id = this.dictionary.addNew(this.shared.terms[shared]!);
      termIds[i] = id;
    }
  }
}
