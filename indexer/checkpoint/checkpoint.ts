/**
 * Checkpoints for `--resume`: after each run is on disk, what a later build needs to go on from
 * exactly that point instead of from the start.
 *
 * A run is a whole block, and a block boundary can fall inside a batch, so a checkpoint records
 * where in the (deterministic) stream of batches the block ended: batch (seq, part) and how many
 * of its pairs were taken. With it go the terms and documents that were new since the previous
 * checkpoint (a delta file) and the parse counters. A resumed build restores the dictionary and
 * the document table from the deltas, re-parses from the file the last block ended in, skips what
 * the completed runs already hold, and so writes the same later runs as an uninterrupted build:
 * the index is byte-identical.
 *
 * On disk, in the output's resume sibling `.NAME.gpuindex-resume/`:
 *   runs/run-NNNNNN.bin     the completed runs (the build's run folder while --resume is on)
 *   runs/run-NNNNNN.pos     with --positions, each run's positions (merge/run-positions.ts)
 *   delta-NNNNNN.json       terms and documents new in checkpoint N
 *   resume.json             { format, key, checkpoints: [...] }, replaced atomically after each run
 * `key` hashes the crawl listing (path, size, mtime of every file) and every setting that shapes
 * the runs; each checkpoint holds the SHA-256 of its run and delta (and positions file), checked
 * before reuse. With --positions a delta also holds its documents' title lengths.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sha256OfFile } from '../../merge/manifest.js';
import { positionsPathOf } from '../../merge/run-positions.js';
import { asDocId } from '../../src/shared/types.js';
import type { TermDictionary } from '../fill/dictionary.js';
import type { DocumentTable } from '../fill/documents.js';
import type { LineState } from '../parse/jsonl-ranges.js';
import type { ParseCounters } from '../pipeline/in-process-pipeline.js';
import { processAlive } from '../../runtime/process-alive.js';
import { releaseLockFile, takeLockFile, type LockHolder } from '../../runtime/lock-file.js';

/** 2: run files end with key samples (merge/runs.ts). */
const FORMAT = 2;
const MANIFEST = 'resume.json';
/** Held by the build using the folder (runtime/lock-file.ts). Two builds of one output would delete and read each other's runs. */
const LOCK = 'lock';

/**
 * Takes the resume folder for this build (created if missing); throws `busy(pid)` while a live
 * build holds it. A lock left by a process that is gone (SIGKILL, power cut) is taken over
 * whatever its host, so that a cluster task rerun on another node resumes (the writer's lock
 * refuses another host's).
 */
function takeLock(dir: string, busy: (pid: number) => Error): string {
  mkdirSync(dir, { recursive: true });
  const holds = (h: LockHolder): boolean => Number.isInteger(h.pid) && h.pid! > 0 && processAlive(h.pid!);
  return takeLockFile(join(dir, LOCK), holds, (h) => busy(h.pid ?? NaN));
}

/**
 * A position in the crawl-ordered stream of batches. inBatch: batch (seq, part) was already
 * remapped (its documents are in the table) and its first `taken` pairs are in completed runs;
 * otherwise everything before (seq, part) is done and that batch is untouched.
 */
export interface ResumePoint {
  seq: number;
  part: number;
  taken: number;
  inBatch: boolean;
  /** Line numbering of a range task (jsonl-ranges.ts) at this point; absent means none yet. */
  lines?: LineState;
}

interface CheckpointRecord {
  run: string;
  runSha256: string;
  delta: string;
  deltaSha256: string;
  /** --positions: the SHA-256 of the run's positions file. */
  positionsSha256?: string;
  terms: number;
  documents: number;
  resumeAt: ResumePoint;
  counters: ParseCounters;
}

interface ResumeManifest {
  format: number;
  key: string;
  checkpoints: CheckpointRecord[];
}

interface Delta {
  terms: string[];
  externalIds: string[];
  paths: string[];
  lengths: number[];
  /** --positions: each document's title length in terms. */
  titleLengths?: number[];
  /** [docId, WARC-Date, WARC-Record-ID] of the WARC documents among them. */
  warc?: [number, string, string][];
}

/** What the completed runs of an earlier build hold, restored into this build's state. */
export interface RestoredState {
  runPaths: string[];
  runBytes: number;
  counters: ParseCounters;
  resumeAt: ResumePoint;
}

/** Captured when a block is handed to the sorter; committed once its run is on disk. */
export interface PendingCheckpoint {
  index: number;
  terms: number;
  documents: number;
  resumeAt: ResumePoint;
  counters: ParseCounters;
}

const sha256 = (data: Buffer | string): string => createHash('sha256').update(data).digest('hex');

/** The key of a build's runs: anything that changes a run or the stream position changes it. */
export function resumeKey(parts: unknown): string {
  return sha256(JSON.stringify({ format: FORMAT, parts }));
}

export class CheckpointLog {
  readonly runDir: string;
  private readonly records: CheckpointRecord[] = [];
  private termsSaved = 0;
  private documentsSaved = 0;

  private lockToken?: string;

  private constructor(readonly dir: string, private readonly key: string, private readonly positions: boolean) {
    this.runDir = join(dir, 'runs');
  }

  /**
   * Opens the resume folder for a build with this key. With `reuse`, returns the state of the
   * longest prefix of valid checkpoints (restoring `dictionary` and `documents`), and why the
   * rest was dropped; files past that prefix are removed so the build rewrites them. `positions`
   * (--positions, part of the key too): runs have positions files and deltas title lengths.
   */
  static open(dir: string, key: string, reuse: boolean, dictionary: TermDictionary, documents: DocumentTable, positions = false, busy: (pid: number) => Error = (pid) => new Error(`the resume folder ${dir} is in use by another build (pid ${pid})`)): { log: CheckpointLog; restored?: RestoredState; dropped?: string } {
    const log = new CheckpointLog(dir, key, positions);
    log.lockToken = takeLock(dir, busy);
    try {
      return CheckpointLog.openLocked(log, dir, key, reuse, dictionary, documents, positions);
    } catch (err) {
      log.unlock();
      throw err;
    }
  }

  /** Gives the resume folder back (a build that ends, done or not); a no-op once the folder is gone. */
  unlock(): void {
    if (!this.lockToken) return;
    releaseLockFile(join(this.dir, LOCK), this.lockToken);
    this.lockToken = undefined;
  }

  private static openLocked(log: CheckpointLog, dir: string, key: string, reuse: boolean, dictionary: TermDictionary, documents: DocumentTable, positions: boolean): { log: CheckpointLog; restored?: RestoredState; dropped?: string } {
    let manifest: ResumeManifest | undefined;
    let dropped: string | undefined;
    if (reuse && existsSync(join(dir, MANIFEST))) {
      try {
        manifest = JSON.parse(readFileSync(join(dir, MANIFEST), 'utf8')) as ResumeManifest;
      } catch {
        dropped = 'its resume.json is unreadable';
      }
      if (manifest && (manifest.format !== FORMAT || manifest.key !== key)) {
        dropped = 'it was made from a different crawl or different settings';
        manifest = undefined;
      }
    }
    const kept: CheckpointRecord[] = [];
    for (const r of manifest?.checkpoints ?? []) {
      const runPath = join(log.runDir, r.run);
      const deltaPath = join(dir, r.delta);
      const positionsPath = positionsPathOf(runPath);
      const positionsDamaged = positions && (!r.positionsSha256 || !existsSync(positionsPath) || sha256OfFile(positionsPath) !== r.positionsSha256);
      if (!existsSync(runPath) || !existsSync(deltaPath) || sha256OfFile(runPath) !== r.runSha256 || sha256OfFile(deltaPath) !== r.deltaSha256 || positionsDamaged) {
        dropped = `${r.run} or its delta is missing or damaged; resuming before it`;
        break;
      }
      kept.push(r);
    }
    // Start the folder afresh around the kept checkpoints: stray runs (a block that was being
    // written when the build died) would otherwise be taken for the new ones.
    const keepNames = new Set(kept.map((r) => r.delta));
    const keepRuns = new Set(kept.flatMap((r) => (positions ? [r.run, positionsPathOf(r.run)] : [r.run])));
    mkdirSync(log.runDir, { recursive: true });
    for (const name of readdirSync(dir)) if (name !== 'runs' && name !== LOCK && !keepNames.has(name)) rmSync(join(dir, name), { recursive: true, force: true });
    for (const name of readdirSync(log.runDir)) if (!keepRuns.has(name)) rmSync(join(log.runDir, name), { force: true });
    let restored: RestoredState | undefined;
    for (const r of kept) {
      const delta = JSON.parse(readFileSync(join(dir, r.delta), 'utf8')) as Delta;
      for (const t of delta.terms) dictionary.idOf(t);
      for (let i = 0; i < delta.externalIds.length; i++) {
        const docId = documents.add(delta.externalIds[i]!, delta.paths[i]!, delta.lengths[i]!);
        if (positions) documents.setTitleLength(docId, delta.titleLengths?.[i] ?? 0);
      }
      for (const [docId, date, recordId] of delta.warc ?? []) documents.setWarc(docId, date, recordId);
      if (dictionary.size !== r.terms || documents.count !== r.documents) throw new Error(`resume state inconsistent at ${r.run}`);
      log.records.push(r);
    }
    log.termsSaved = dictionary.size;
    log.documentsSaved = documents.count;
    const last = kept.at(-1);
    if (last) {
      const runPaths = kept.map((r) => join(log.runDir, r.run));
      restored = { runPaths, runBytes: last.counters.runBytes, counters: structuredClone(last.counters), resumeAt: last.resumeAt };
    }
    log.writeManifest();
    return { log, restored, dropped };
  }

  /** The state at the moment block `index` is complete (before later batches change it). */
  capture(index: number, resumeAt: ResumePoint, dictionary: TermDictionary, documents: DocumentTable, counters: ParseCounters): PendingCheckpoint {
    return { index, terms: dictionary.size, documents: documents.count, resumeAt, counters: structuredClone(counters) };
  }

  /**
   * Records a checkpoint once its run file is complete (runSha256: its hash, computed while it
   * was written). Checkpoints commit in block order.
   */
  commit(p: PendingCheckpoint, runPath: string, runSha256: string, runBytesTotal: number, dictionary: TermDictionary, documents: DocumentTable): void {
    if (p.index !== this.records.length) throw new Error(`checkpoint ${p.index} committed out of order`);
    const name = `delta-${String(p.index).padStart(6, '0')}.json`;
    const delta: Delta = {
      terms: dictionary.terms.slice(this.termsSaved, p.terms),
      externalIds: documents.externalIds.slice(this.documentsSaved, p.documents),
      paths: documents.paths.slice(this.documentsSaved, p.documents),
      lengths: Array.from({ length: p.documents - this.documentsSaved }, (_, i) => documents.lengthOf(asDocId(this.documentsSaved + i))),
    };
    if (this.positions) {
      const titles = documents.titleLengthsView();
      delta.titleLengths = Array.from(titles.subarray(this.documentsSaved, p.documents));
    }
    const warc: [number, string, string][] = [];
    for (let i = this.documentsSaved; i < p.documents; i++) {
      const w = documents.warc.get(i);
      if (w) warc.push([i, w[0], w[1]]);
    }
    if (warc.length > 0) delta.warc = warc;
    const text = JSON.stringify(delta);
    writeFileSync(join(this.dir, name), text);
    const runName = runPath.slice(this.runDir.length + 1);
    const counters = { ...p.counters, blocks: p.index + 1, runBytes: runBytesTotal };
    // The run's positions file is complete by now (RunSink.sortAndWrite waits for it).
    const positionsSha256 = this.positions ? sha256OfFile(positionsPathOf(runPath)) : undefined;
    this.records.push({ run: runName, runSha256, delta: name, deltaSha256: sha256(text), ...(positionsSha256 ? { positionsSha256 } : {}), terms: p.terms, documents: p.documents, resumeAt: p.resumeAt, counters });
    this.termsSaved = p.terms;
    this.documentsSaved = p.documents;
    this.writeManifest();
  }

  private writeManifest(): void {
    const tmp = join(this.dir, `${MANIFEST}.tmp`);
    writeFileSync(tmp, JSON.stringify({ format: FORMAT, key: this.key, checkpoints: this.records } satisfies ResumeManifest));
    renameSync(tmp, join(this.dir, MANIFEST)); // atomic: a kill leaves the old or the new list
  }
}

/** Where a batch stands against a resume point: before it, the partly taken batch, or after. */
export function comparePoint(seq: number, part: number, p: ResumePoint): -1 | 0 | 1 {
  if (seq !== p.seq) return seq < p.seq ? -1 : 1;
  if (part !== p.part) return part < p.part ? -1 : 1;
  return 0;
}
