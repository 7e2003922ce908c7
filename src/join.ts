/**
 * `gpuindex join`: one index of the shards of a crawl (`build --shard i/N`), whose segments are
 * the shards' own files, linked (copied only across file systems), never rewritten. The shards
 * must all come from the same crawl listing and analysis settings, each exactly once, and all
 * with positions (--positions: each shard's positions.bin is linked with its segment) or none.
 */
import { copyFileSync, existsSync, linkSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { INDEX_DB, POSTINGS_FILE } from '../merge/index-store.js';
import { MANIFEST_FILE } from '../merge/manifest.js';
import { IMPACTS_FILE } from '../merge/impacts.js';
import { LEXICON_FILE } from '../merge/lexicon-file.js';
import { POSITIONS_FILE } from '../merge/positions-file.js';
import { SegmentFormatError, SegmentReader } from '../merge/segment-reader.js';
import { readSegments, segmentEntry, segmentName, SEGMENTS_FORMAT_VERSION, writeSegments, type SegmentEntry } from '../merge/segments.js';
import { UserError } from './shared/errors.js';
import { commitOutput, discardOutput, prepareOutput } from './output.js';

/** What a shard's settings record (src/build/parse-sort.ts ShardIdentity). */
interface ShardSetting {
  index: number;
  count: number;
  listing: string;
  settings: string;
}

export interface JoinResult {
  output: string;
  segments: number;
  documents: number;
  /** Files linked (the rest were copied). */
  linked: number;
  ms: number;
}

export function joinShards(output: string, shardDirs: readonly string[], force = false): JoinResult {
  const t0 = performance.now();
  if (shardDirs.length === 0) throw new UserError('join: give the shard folders to join');
  const shards = shardDirs.map(readShard);
  const first = shards[0]!;
  const count = first.shard.count;
  const byIndex = new Map<number, (typeof shards)[number]>();
  for (const s of shards) {
    if (s.shard.count !== count) throw new UserError(`join: ${s.dir} is shard ${s.shard.index}/${s.shard.count}, ${first.dir} is one of ${count}`);
    if (s.shard.listing !== first.shard.listing) throw new UserError(`join: ${s.dir} was built from another crawl listing than ${first.dir}`);
    if (s.shard.settings !== first.shard.settings) throw new UserError(`join: ${s.dir} was built with other analysis settings than ${first.dir}`);
    if (s.positions !== first.positions) throw new UserError(`join: ${(s.positions ? s : first).dir} was built with --positions, ${(s.positions ? first : s).dir} without`);
    const twin = byIndex.get(s.shard.index);
    if (twin) throw new UserError(`join: shard ${s.shard.index}/${count} is given twice: ${twin.dir} and ${s.dir}`);
    byIndex.set(s.shard.index, s);
  }
  for (let i = 0; i < count; i++) if (!byIndex.has(i)) throw new UserError(`join: shard ${i}/${count} is missing`);

  const plan = prepareOutput(output, force);
  try {
    let linked = 0;
    const entries: SegmentEntry[] = [];
    for (let i = 0; i < count; i++) {
      const s = byIndex.get(i)!;
      const name = segmentName(i);
      mkdirSync(join(plan.temp, name));
      for (const f of [POSTINGS_FILE, INDEX_DB, MANIFEST_FILE, ...[LEXICON_FILE, IMPACTS_FILE, POSITIONS_FILE].filter((g) => existsSync(join(s.dir, g)))]) linked += linkOrCopy(join(s.dir, f), join(plan.temp, name, f));
      entries.push(segmentEntry(name, s.stats));
    }
    writeSegments(plan.temp, {
      format: 'gpuindex-segments',
      formatVersion: SEGMENTS_FORMAT_VERSION,
      generation: 1,
      segments: entries,
      shards: { count, listing: first.shard.listing, settings: first.shard.settings },
      // The analysis a writer on the joined index builds its segments with (src/writer.ts).
      settings: first.analysis,
    });
    commitOutput(plan);
    return { output: plan.output, segments: count, documents: entries.reduce((a, e) => a + e.documents, 0), linked, ms: performance.now() - t0 };
  } catch (err) {
    discardOutput(plan);
    throw err;
  }
}

function readShard(dir: string): { dir: string; shard: ShardSetting; stats: SegmentReader['stats']; positions: boolean; analysis: Record<string, unknown> } {
  if (readSegments(dir)) throw new UserError(`join: ${dir} is a joined index, not a shard`);
  let reader: SegmentReader;
  try {
    reader = new SegmentReader(dir);
  } catch (err) {
    if (err instanceof SegmentFormatError) throw new UserError(`join: ${err.message}`);
    throw err;
  }
  try {
    const shard = reader.settings.shard as ShardSetting | undefined;
    if (!shard || typeof shard.index !== 'number') throw new UserError(`join: ${dir} is not a shard (built without --shard)`);
    const positions = reader.settings.positions === true;
    if (positions && !existsSync(join(dir, POSITIONS_FILE))) throw new UserError(`join: ${dir} was built with --positions but ${POSITIONS_FILE} is missing`);
    const analysis = { tokenizer: reader.settings.tokenizer, fields: reader.settings.fields ?? null, ...(positions ? { positions } : {}) };
    return { dir, shard, stats: reader.stats, positions, analysis };
  } finally {
    reader.close();
  }
}

/** Hard-links `from` to `to` (1), or copies it where links cannot cross file systems (0). */
function linkOrCopy(from: string, to: string): number {
  try {
    linkSync(from, to);
    return 1;
  } catch (err) {
    if (!['EXDEV', 'EPERM', 'ENOTSUP'].includes((err as NodeJS.ErrnoException).code ?? '')) throw err;
    copyFileSync(from, to);
    return 0;
  }
}
