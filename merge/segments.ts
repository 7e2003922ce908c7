/**
 * The commit point of an index made of several segments: segments.json names them in docID
 * order, each a one-segment index folder inside the index (seg-NNNN/), under a generation
 * number. It is replaced atomically (written beside, fsynced, renamed over, the folder fsynced),
 * so a reader sees the old generation or the new one, never a mix. An index without
 * segments.json is one segment: the folder itself, as `gpuindex build` writes it.
 */
import { close, closeSync, existsSync, fsync, fsyncSync, open, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
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
  /** Grows by one with every commit of the index. */
  generation: number;
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

/** The folders of an index's segments, in docID order. */
export function segmentDirs(dir: string): string[] {
  const m = readSegments(dir);
  return m ? m.segments.map((s) => join(dir, s.name)) : [dir];
}

/** The folder name of segment `i`. */
export const segmentName = (i: number): string => `seg-${String(i).padStart(4, '0')}`;

/** Commits `manifest` as the index's segments.json, atomically and durably. */
export function writeSegments(dir: string, manifest: SegmentsManifest): void {
  const path = join(dir, SEGMENTS_FILE);
  const temp = `${path}.tmp-${process.pid}`;
  const fd = openSync(temp, 'w');
  try {
    writeSync(fd, JSON.stringify(manifest, null, 2) + '\n');
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temp, path);
  fsyncDir(dir);
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
