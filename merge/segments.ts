/**
 * The commit point of an index made of several segments: segments.json names them in docID
 * order, each a one-segment index folder inside the index (seg-NNNN/), under a generation
 * number. It is replaced atomically (written beside, fsynced, renamed over, the folder fsynced),
 * so a reader sees the old generation or the new one, never a mix. An index without
 * segments.json is one segment: the folder itself, as `gpuindex build` writes it.
 */
import { close, closeSync, existsSync, fsync, fsyncSync, open, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { SegmentFormatError } from './segment-reader.js';

export const SEGMENTS_FILE = 'segments.json';
export const SEGMENTS_FORMAT_VERSION = 1;

export interface SegmentEntry {
  /** The segment's folder inside the index. */
  name: string;
  documents: number;
  totalTokens: number;
  /** Distinct terms of the segment alone. */
  terms: number;
  postings: number;
  /** The file of the segment's deleted documents (merge/deletes.ts), and how many; none when absent. */
  deletes?: string;
  deleted?: number;
}

export interface SegmentsManifest {
  format: 'gpuindex-segments';
  formatVersion: number;
  /** Grows by one with every commit of the index; starts over when optimize makes it one segment. */
  generation: number;
  /**
   * New and random with every commit (writeSegments): what tells a reader that the index changed,
   * as the generation, which can come back, cannot. Absent in files written before it.
   */
  commitId?: string;
  /** In docID order: segment i's documents follow segment i-1's. */
  segments: SegmentEntry[];
  /** What the segments were built from, when they are the shards of one crawl (`gpuindex join`). */
  shards?: { count: number; listing: string; settings: string };
  /** The writer's: the last write-ahead-log sequence number the segments hold (merge/write-ahead-log.ts). */
  walSeq?: number;
  /** The writer's: the analysis settings of every segment, which an index of no segment yet needs too. */
  settings?: Record<string, unknown>;
}

/** A segment's manifest entry, from its statistics. */
export function segmentEntry(name: string, stats: { documents: number; totalTokens: number; terms: number; postings: number }): SegmentEntry {
  return { name, documents: stats.documents, totalTokens: stats.totalTokens, terms: stats.terms, postings: stats.postings };
}

/** The manifest of a segmented index, or undefined for a one-segment (flat) index. */
export function readSegments(dir: string): SegmentsManifest | undefined {
  const path = join(dir, SEGMENTS_FILE);
  if (!existsSync(path)) return undefined;
  let m: SegmentsManifest;
  try {
    m = JSON.parse(readFileSync(path, 'utf8')) as SegmentsManifest;
  } catch (err) {
    throw new SegmentFormatError(`${path}: ${(err as Error).message}`);
  }
  if (m.format !== 'gpuindex-segments' || !Array.isArray(m.segments)) throw new SegmentFormatError(`${path}: not a gpuindex segments file`);
  if (m.formatVersion !== SEGMENTS_FORMAT_VERSION) throw new SegmentFormatError(`${path}: segments format ${m.formatVersion}, this gpuindex reads ${SEGMENTS_FORMAT_VERSION}`);
  return m;
}

/**
 * What is wrong with a parsed segments.json, as `field: why` for the first wrong field, or
 * undefined: the types SegmentsManifest says, a format this gpuindex reads, each segment named
 * once. Whether the segments on disk agree with it is verify's (merge/verify.ts).
 */
export function segmentsFileDamage(m: unknown): string | undefined {
  if (!isObject(m)) return `${shown(m)} is not an object`;
  if (m.format !== 'gpuindex-segments') return `format: ${shown(m.format)}, not "gpuindex-segments"`;
  if (m.formatVersion !== SEGMENTS_FORMAT_VERSION) return `formatVersion: segments format ${shown(m.formatVersion)}, this gpuindex reads ${SEGMENTS_FORMAT_VERSION}`;
  if (!isCount(m.generation)) return notCount('generation', m.generation);
  if (m.commitId !== undefined && (typeof m.commitId !== 'string' || m.commitId === '')) return `commitId: ${shown(m.commitId)} is not a commit's id`;
  if (m.walSeq !== undefined && !isCount(m.walSeq)) return notCount('walSeq', m.walSeq);
  if (!Array.isArray(m.segments)) return `segments: ${shown(m.segments)} is not a list`;
  const names = new Set<string>();
  for (const [i, e] of (m.segments as unknown[]).entries()) {
    const why = entryDamage(`segments[${i}]`, e, names);
    if (why) return why;
  }
  return settingsDamage(m.settings) ?? shardsDamage(m.shards);
}

function entryDamage(at: string, e: unknown, names: Set<string>): string | undefined {
  if (!isObject(e)) return `${at}: ${shown(e)} is not an object`;
  if (!isPlainName(e.name)) return `${at}.name: ${shown(e.name)} is not a folder name`;
  if (names.has(e.name)) return `${at}.name: ${e.name} is listed twice`;
  names.add(e.name);
  for (const key of ['documents', 'totalTokens', 'terms', 'postings'] as const) if (!isCount(e[key])) return notCount(`${at}.${key}`, e[key]);
  if (e.deletes !== undefined && (!isPlainName(e.deletes) || e.deletes === '.')) return `${at}.deletes: ${shown(e.deletes)} is not a file name`;
  if (e.deleted !== undefined && !isCount(e.deleted)) return notCount(`${at}.deleted`, e.deleted);
  // The writer names a deletes file with every count of deleted documents it records.
  if (e.deletes === undefined && isCount(e.deleted) && e.deleted > 0) return `${at}.deleted: ${e.deleted}, but ${at}.deletes names no file`;
  return undefined;
}

/** The analysis settings (the writer's and join's): tokenizer options, JSON fields, positions. */
function settingsDamage(s: unknown): string | undefined {
  if (s === undefined) return undefined;
  if (!isObject(s)) return `settings: ${shown(s)} is not an object`;
  if (s.tokenizer !== undefined && !isObject(s.tokenizer)) return `settings.tokenizer: ${shown(s.tokenizer)} is not an object`;
  if (s.fields !== undefined && s.fields !== null && !isObject(s.fields)) return `settings.fields: ${shown(s.fields)} is not an object or null`;
  if (s.positions !== undefined && typeof s.positions !== 'boolean') return `settings.positions: ${shown(s.positions)} is not true or false`;
  return undefined;
}

function shardsDamage(s: unknown): string | undefined {
  if (s === undefined || (isObject(s) && isCount(s.count) && typeof s.listing === 'string' && typeof s.settings === 'string')) return undefined;
  return `shards: ${shown(s)} is not {count, listing, settings}`;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
/** Counts, generations and sequence numbers: whole numbers from 0. */
const isCount = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;
/** A name inside the index folder, not a path out of it (`.`: the folder itself, a built index taken as a segment). */
const isPlainName = (v: unknown): v is string => typeof v === 'string' && v !== '' && v !== '..' && !/[/\\\0]/.test(v);
const shown = (v: unknown): string => (v === undefined ? 'undefined' : JSON.stringify(v));
const notCount = (field: string, v: unknown): string => `${field}: ${shown(v)} is not a count (a whole number from 0)`;

/** The folders of an index's segments, in docID order. */
export function segmentDirs(dir: string): string[] {
  const m = readSegments(dir);
  return m ? m.segments.map((s) => join(dir, s.name)) : [dir];
}

/** The folder name of segment `i`. */
export const segmentName = (i: number): string => `seg-${String(i).padStart(4, '0')}`;

/** Commits `manifest` under a new commitId as the index's segments.json, atomically and durably; returns it as written. */
export function writeSegments(dir: string, manifest: SegmentsManifest): SegmentsManifest {
  const written = { ...manifest, commitId: randomUUID() };
  const path = join(dir, SEGMENTS_FILE);
  const temp = `${path}.tmp-${process.pid}`;
  const fd = openSync(temp, 'w');
  try {
    writeSync(fd, JSON.stringify(written, null, 2) + '\n');
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temp, path);
  fsyncDir(dir);
  return written;
}

/**
 * fsync of a file or a folder on libuv's pool: the calling thread goes on meanwhile, and
 * several at once can share the file system's journal commits.
 */
export function fsyncPath(path: string): Promise<void> {
  return new Promise((resolve, reject) =>
    open(path, 'r', (err, fd) => {
      if (err) return reject(err);
      fsync(fd, (syncErr) => close(fd, (closeErr) => (syncErr ?? closeErr ? reject(syncErr ?? closeErr) : resolve())));
    }),
  );
}

/** Makes a rename or a new file in `dir` durable. */
export function fsyncDir(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
