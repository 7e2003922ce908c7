/**
 * The main thread's record of the parse workers' lexicon generations (fill/worker-lexicon.ts):
 * the closed ones by the path they were spilled to, each worker's last one as it sent it. The
 * merge takes them worker by worker, generation by generation (indexOf numbers them so), and
 * unites them by term as it would unite workers.
 */
import { readSpilledLexicon, type SpilledLexicon } from '../../merge/spilled-lexicon.js';
import type { ByteLexicon } from '../../merge/lexicon-union.js';

/** Which lexicon keys a run: a worker's generation. */
export interface GenerationOf {
  worker: number;
  generation: number;
}

/** A generation's terms and ids, and its worker. */
export interface GenerationLexicon extends SpilledLexicon {
  worker: number;
}

const EMPTY: SpilledLexicon = { terms: { bytes: new Uint8Array(0), ends: new Uint32Array(0) }, order: new Uint32Array(0) };

export class LexiconGenerations {
  private readonly spilledPaths: string[][];
  private readonly lasts: (SpilledLexicon & { generation: number })[] = [];
  /** Documents each worker numbered, as its last message said. */
  readonly documents: (number | undefined)[] = [];

  constructor(private readonly workers: number) {
    this.spilledPaths = Array.from({ length: workers }, () => []);
  }

  spilled(worker: number, generation: number, path: string): void {
    this.spilledPaths[worker]![generation] = path;
  }

  last(worker: number, generation: number, lexicon: { terms: ByteLexicon; order: Uint32Array }, documents: number): void {
    this.lasts[worker] = { ...lexicon, generation };
    this.documents[worker] = documents;
  }

  /** Generations of `worker`: its spilled ones and its last. */
  private countOf(worker: number): number {
    return (this.lasts[worker]?.generation ?? this.spilledPaths[worker]!.length) + 1;
  }

  /** Every generation of every worker, worker by worker, in order; spilled ones read from disk. */
  lexicons(): GenerationLexicon[] {
    const all: GenerationLexicon[] = [];
    for (let w = 0; w < this.workers; w++) {
      const n = this.countOf(w);
      for (let g = 0; g < n - 1; g++) {
        const path = this.spilledPaths[w]![g];
        if (path === undefined) throw new Error(`parse worker ${w} did not report its lexicon generation ${g}`);
        all.push({ worker: w, ...readSpilledLexicon(path) });
      }
      const last = this.lasts[w];
      all.push({ worker: w, ...(last && last.generation === n - 1 ? last : EMPTY) });
    }
    return all;
  }

  /** The index in lexicons() of a worker's generation. */
  indexOf(g: GenerationOf): number {
    if (g.worker >= this.workers || g.generation >= this.countOf(g.worker)) throw new Error(`a run is keyed by parse worker ${g.worker}'s lexicon generation ${g.generation}, which it did not report`);
    let first = 0;
    for (let w = 0; w < g.worker; w++) first += this.countOf(w);
    return first + g.generation;
  }

  /** Whether a worker has written a generation to disk. */
  anySpilled(): boolean {
    return this.spilledPaths.some((paths) => paths.length > 0);
  }

  /** Terms of each worker's last generation. */
  lastTermCounts(): number[] {
    return Array.from({ length: this.workers }, (_, w) => this.lasts[w]?.terms.ends.length ?? 0);
  }
}
