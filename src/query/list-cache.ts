import { BudgetCache } from './budget-cache.js';

/**
 * Postings lists kept in memory between queries, least recently used first out, up to a budget
 * of bytes. A query log repeats its frequent terms, whose lists are the long ones: a 1 GB crawl's
 * most frequent term has a 600 KB list, read whole from postings.bin by each query that holds it
 * (a query's pruning then decodes a few % of its blocks).
 */
/** Keys: a list's segment and termID (src/reader.ts). */
export class ListCache extends BudgetCache<number, Uint8Array> {
  constructor(budget: number) {
    super(budget, (list) => list.length);
  }
}
