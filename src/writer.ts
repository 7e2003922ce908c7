/**
 * openWriter(): an index that takes documents all day. Documents added are logged (fsynced
 * before add() resolves: merge/write-ahead-log.ts), buffered, and flushed into a new segment by a
 * small build of their own (buildIndex: the same analysis, sorter and run format as a crawl's)
 * when the buffer reaches `flushBytes`, at refresh() or by the refresh timer. A flushed segment
 * is searchable through writer.reader() at once; commit() makes it the index's: its files are
 * fsynced and segments.json names it under the next generation, which is what openIndex() and
 * other processes read. A crash loses nothing acknowledged: reopening removes segments no commit
 * names and replays the log after the last commit.
 */
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { join, resolve } from 'node:path';
import { INDEX_DB, POSTINGS_FILE } from '../merge/index-store.js';
import { MANIFEST_FILE } from '../merge/manifest.js';
import { SegmentReader } from '../merge/segment-reader.js';
import { fsyncDir, readSegments, segmentEntry, segmentName, SEGMENTS_FORMAT_VERSION, writeSegments, type SegmentEntry, type SegmentsManifest } from '../merge/segments.js';
import { readLog, WriteAheadLog, type LoggedOperation, type LoggedOperationBody } from '../merge/write-ahead-log.js';
import { readDeletes, writeDeletes } from '../merge/deletes.js';
import { DEFAULT_MERGE_POLICY, pickMerge, type MergePolicy } from '../merge/merge-policy.js';
import { workerScript } from '../runtime/worker-script.js';
import { acquireWriteLock, LockHeld, type WriteLock } from '../merge/write-lock.js';
import { resolveTokenizerOptions } from '../indexer/analysis/tokenizer.js';
import { buildIndex } from './build.js';
import { IndexReader } from './reader.js';
import { UserError } from './shared/errors.js';
import type { BuildOptions, InputDocument } from './shared/options.js';

export interface WriterOptions extends Pick<BuildOptions, 'stem' | 'stopwords' | 'cjk' | 'maxTokenLength' | 'sorter' | 'memory' | 'onWarning'> {
  /** Buffered document bytes that start a flush into a new segment. Default 16 MiB. */
  flushBytes?: number;
  /** Milliseconds between automatic refreshes while documents are buffered; 0: refresh() only. Default 1000. */
  refreshMs?: number;
  /**
   * 0 (default): each add() is fsynced before it resolves. n > 0: one fsync every n ms for all
   * the add() calls in that window (each still resolves only once its fsync is done).
   */
  fsyncGroupMs?: number;
  /**
   * When segments merge (merge/merge-policy.ts): after each commit, neighbours the policy picks
   * are merged on a worker thread while further operations wait, and the result is committed.
   * false: only `optimizeIndex` merges. Default DEFAULT_MERGE_POLICY.
   */
  mergePolicy?: Partial<MergePolicy> | false;
}

export const DEFAULT_FLUSH_BYTES = 16 << 20;

/** A merge in progress writes into a folder of this prefix, renamed to its segment's name when complete. */
const MERGING = '.merging-';

export async function openWriter(dir: string, options: WriterOptions = {}): Promise<IndexWriter> {
  const path = resolve(dir);
  if (!existsSync(path)) mkdirSync(path, { recursive: true });
  let lock: WriteLock;
  try {
    lock = acquireWriteLock(path);
  } catch (err) {
    if (err instanceof LockHeld) throw new UserError(err.message);
    throw err;
  }
  try {
    return new IndexWriter(path, lock, startingManifest(path, options), options);
  } catch (err) {
    lock.release();
    throw err;
  }
}

/** The committed manifest of `dir`, made for a new index, or naming a built (one-segment) index as its segment "." . */
function startingManifest(dir: string, options: WriterOptions): SegmentsManifest {
  const committed = readSegments(dir);
  if (committed) return committed;
  const manifest: SegmentsManifest = { format: 'gpuindex-segments', formatVersion: SEGMENTS_FORMAT_VERSION, generation: 0, segments: [], walSeq: 0 };
  if (existsSync(join(dir, INDEX_DB))) {
    const built = new SegmentReader(dir);
    try {
      manifest.segments.push(segmentEntry('.', built.stats));
      manifest.settings = { tokenizer: built.settings.tokenizer, fields: built.settings.fields ?? null };
    } finally {
      built.close();
    }
  } else {
    manifest.settings = { tokenizer: resolveTokenizerOptions(options), fields: null };
  }
  writeSegments(dir, manifest);
  return manifest;
}

export class IndexWriter {
  private committed: SegmentsManifest;
  /** Segments flushed since the last commit: searchable through reader(), not yet the index's. */
  private pending: SegmentEntry[] = [];
  private buffer: InputDocument[] = [];
  private bufferedBytes = 0;
  private seq: number;
  private readonly ids = new Set<string>();
  /** Where each flushed document is: its segment and the segment's docID. */
  private readonly locations = new Map<string, { segment: string; local: number }>();
  /** Each segment's deleted docIDs as they stand now, and the segments whose set changed since the last refresh. */
  private readonly deleted = new Map<string, Set<number>>();
  private readonly changed = new Set<string>();
  /** Deletes files written by refreshes, not yet committed: segment -> file. */
  private readonly deletesFiles = new Map<string, string>();
  private deletesWritten = 0;
  private readonly wal: WriteAheadLog;
  private queue: Promise<unknown> = Promise.resolve();
  private readonly timer?: NodeJS.Timeout;
  private closed = false;
  /** Grows by one whenever a refresh changes what reader() sees: a cached reader older than it is stale. */
  refreshes = 0;

  constructor(
    readonly path: string,
    private readonly lock: WriteLock,
    manifest: SegmentsManifest,
    private readonly options: WriterOptions,
  ) {
    this.committed = manifest;
    this.seq = manifest.walSeq ?? 0;
    // Segments no commit names were flushed by a writer that died: the log holds their documents.
    const named = new Set(manifest.segments.map((s) => s.name));
    for (const name of readdirSync(path)) if ((/^seg-\d+$/.test(name) && !named.has(name)) || name.startsWith(MERGING)) rmSync(join(path, name), { recursive: true, force: true });
    for (const s of manifest.segments) this.locate(s);
    for (const op of readLog(path, this.seq)) {
      this.apply(op);
      this.seq = op.seq;
    }
    this.wal = new WriteAheadLog(path, options.fsyncGroupMs ?? 0);
    const refreshMs = options.refreshMs ?? 1000;
    if (refreshMs > 0) {
      this.timer = setInterval(() => {
        if (this.buffer.length > 0) void this.refresh().catch((err) => this.options.onWarning?.(`refresh failed: ${(err as Error).message}`));
      }, refreshMs);
      this.timer.unref();
    }
  }

  /** Runs `task` after every operation queued before it: one operation on the index at a time. */
  private serial<T>(task: () => Promise<T>): Promise<T> {
    const run = this.queue.then(task, task);
    this.queue = run.catch(() => {});
    return run;
  }

  /**
   * Adds documents, durably: resolves once they are in the log on disk. An id the index, the
   * buffer or the same call holds already is refused (a UserError naming it), and nothing of the
   * call is added: replace() replaces. An iterable is read whole first.
   */
  async add(docs: Iterable<InputDocument> | AsyncIterable<InputDocument>): Promise<{ added: number }> {
    this.checkOpen();
    const list: InputDocument[] = [];
    for await (const d of docs as AsyncIterable<InputDocument>) list.push(d);
    return this.serial(async () => {
      checkDocuments(list, (id) => this.ids.has(id));
      if (list.length === 0) return { added: 0 };
      return { added: await this.logged({ op: 'add', docs: list }) };
    });
  }

  /** Learns a flushed segment's documents (those its deletes file names excepted); returns its entry. */
  private locate(s: { name: string; deletes?: string }): SegmentEntry {
    const r = new SegmentReader(join(this.path, s.name));
    try {
      const gone = s.deletes ? readDeletes(r.dir, s.deletes, r.stats.documents) : undefined;
      const set = new Set<number>();
      for (const [local, id] of r.db.prepare('SELECT doc_id, external_id FROM docs').raw().iterate() as Iterable<[number, string]>) {
        if (gone?.[local]) {
          set.add(local);
          continue;
        }
        this.ids.add(id);
        this.locations.set(id, { segment: s.name, local });
      }
      this.deleted.set(s.name, set);
      return { ...segmentEntry(s.name, r.stats), ...(s.deletes ? { deletes: s.deletes, deleted: set.size } : {}) };
    } finally {
      r.close();
    }
  }

  /**
   * Logs an operation (resolving once it is on disk), applies it, and flushes if the buffer is
   * full; returns what apply() counted.
   */
  private async logged(op: LoggedOperationBody): Promise<number> {
    const entry = { seq: this.seq + 1, ...op } as LoggedOperation;
    await this.wal.append(entry);
    this.seq = entry.seq;
    const n = this.apply(entry);
    if (this.bufferedBytes >= (this.options.flushBytes ?? DEFAULT_FLUSH_BYTES)) await this.flush();
    return n;
  }

  /** Applies a logged operation to the buffer and the delete sets. */
  private apply(op: LoggedOperation): number {
    if (op.op === 'delete') return this.remove(op.ids);
    if (op.op === 'replace') this.remove((op.docs as InputDocument[]).map((d) => d.id));
    for (const d of op.docs as InputDocument[]) this.take(d);
    return op.docs.length;
  }

  /** Deletes documents by id, buffered or flushed; returns how many there were. */
  private remove(ids: readonly string[]): number {
    let n = 0;
    const unflushed = new Set<string>();
    for (const id of ids) {
      if (!this.ids.delete(id)) continue;
      n++;
      const at = this.locations.get(id);
      if (at) {
        this.locations.delete(id);
        this.deleted.get(at.segment)!.add(at.local);
        this.changed.add(at.segment);
      } else unflushed.add(id);
    }
    if (unflushed.size > 0) {
      this.buffer = this.buffer.filter((d) => !unflushed.has(d.id));
      this.bufferedBytes = this.buffer.reduce((a, d) => a + docBytes(d), 0);
    }
    return n;
  }

  private take(d: InputDocument): void {
    this.buffer.push(d);
    this.ids.add(d.id);
    this.bufferedBytes += docBytes(d);
  }

  /**
   * Deletes documents by id, durably (logged before it resolves); visible to reader() after the
   * next refresh, to openIndex() after the next commit. Ids the index does not hold are ignored.
   */
  delete(ids: Iterable<string>): Promise<{ deleted: number }> {
    this.checkOpen();
    const list = [...ids];
    return this.serial(async () => {
      if (list.length === 0) return { deleted: 0 };
      return { deleted: await this.logged({ op: 'delete', ids: list }) };
    });
  }

  /**
   * Adds documents, each replacing the document of the same id if the index holds one: the
   * delete and the add become visible together, at the same refresh.
   */
  async replace(docs: Iterable<InputDocument> | AsyncIterable<InputDocument>): Promise<{ added: number }> {
    this.checkOpen();
    const list: InputDocument[] = [];
    for await (const d of docs as AsyncIterable<InputDocument>) list.push(d);
    return this.serial(async () => {
      checkDocuments(list, () => false);
      if (list.length === 0) return { added: 0 };
      return { added: await this.logged({ op: 'replace', docs: list }) };
    });
  }

  /** The buffered documents into a new segment (pending until the next commit). */
  private async flush(): Promise<void> {
    if (this.buffer.length === 0) return;
    const name = this.nextSegmentName();
    await buildIndex({
      ...this.analysis(),
      input: this.buffer,
      output: join(this.path, name),
      sorter: this.options.sorter,
      memory: this.options.memory,
      onWarning: this.options.onWarning,
    });
    this.pendingSegment(name);
    this.refreshes++;
    this.buffer = [];
    this.bufferedBytes = 0;
  }

  /**
   * Adds a crawl (a folder or file, as `buildIndex` reads it) as one new segment built by the
   * crawl pipeline (parse workers, the GPU sorter where there is one), and commits it: a
   * backfill logs nothing, it is acknowledged by its commit. Its documents' ids are not checked
   * against the index's.
   */
  addCrawl(input: string, build: Omit<BuildOptions, 'input' | 'output' | 'stem' | 'stopwords' | 'cjk' | 'maxTokenLength'> = {}): Promise<{ added: number; generation: number }> {
    this.checkOpen();
    return this.serial(async () => {
      await this.flush();
      const name = this.nextSegmentName();
      const summary = await buildIndex({ ...build, ...this.analysis(), input, output: join(this.path, name) });
      this.pendingSegment(name);
      const { generation } = await this.commitNow();
      return { added: summary.documents, generation };
    });
  }

  /** The index's analysis settings (tokenizer, JSON fields), which every segment is built with. */
  private analysis(): Partial<BuildOptions> {
    const fields = this.committed.settings?.fields as BuildOptions['fields'] | null | undefined;
    return { ...(this.committed.settings?.tokenizer as Partial<BuildOptions> | undefined), ...(fields ? { fields } : {}) };
  }

  private nextSegmentName(): string {
    const used = new Set([...this.committed.segments, ...this.pending].map((s) => s.name));
    let i = this.committed.segments.length + this.pending.length;
    while (used.has(segmentName(i))) i++;
    return segmentName(i);
  }

  private pendingSegment(name: string): void {
    this.pending.push(this.locate({ name }));
  }

  /** Writes the delete sets changed since the last refresh, each as a new file of its segment. */
  private writeDeleteSets(): void {
    for (const name of this.changed) {
      const file = `deletes-${this.committed.generation + 1}-${++this.deletesWritten}.bin`;
      writeDeletes(join(this.path, name), file, this.deleted.get(name)!);
      this.deletesFiles.set(name, file);
      this.refreshes++;
    }
    this.changed.clear();
  }

  /** Committed and pending segments, with the delete files written since the commit. */
  private currentSegments(): SegmentEntry[] {
    return [...this.committed.segments, ...this.pending].map((s) => {
      const file = this.deletesFiles.get(s.name);
      return file ? { ...s, deletes: file, deleted: this.deleted.get(s.name)!.size } : s;
    });
  }

  /** Makes every document added and deleted so far searchable through reader(). */
  refresh(): Promise<void> {
    this.checkOpen();
    return this.serial(async () => {
      await this.flush();
      this.writeDeleteSets();
    });
  }

  /** Makes every document added so far the index's, durably: the next generation of segments.json; then merges what the policy picks. */
  commit(): Promise<{ generation: number }> {
    this.checkOpen();
    return this.serial(async () => {
      const committed = await this.commitNow();
      return (await this.mergeNow()) ?? committed;
    });
  }

  /** Merges committed segments while the policy picks some (at most 4 merges a commit); returns the last generation written. */
  private async mergeNow(): Promise<{ generation: number } | undefined> {
    if (this.options.mergePolicy === false || this.pending.length > 0) return undefined;
    const policy = { ...DEFAULT_MERGE_POLICY, ...this.options.mergePolicy };
    let last: { generation: number } | undefined;
    for (let round = 0; round < 4; round++) {
      const segments = this.committed.segments;
      const range = pickMerge(segments.map((e) => ({ documents: e.documents, deleted: e.deleted ?? 0 })), policy);
      if (!range) break;
      last = await this.mergeRange(range[0], range[1]);
    }
    return last;
  }

  /** Merges committed segments [start, end) into one, on a worker thread, and commits the result. */
  private async mergeRange(start: number, end: number): Promise<{ generation: number }> {
    const inputs = this.committed.segments.slice(start, end);
    const name = this.nextSegmentName();
    const temp = join(this.path, `${MERGING}${name}`);
    mkdirSync(temp);
    const task = { segments: inputs.map((e) => ({ dir: join(this.path, e.name), deletes: e.deletes })), out: temp, settings: {} };
    await new Promise<void>((resolve, reject) => {
      const worker = new Worker(workerScript('merge/segment-merge-worker.js'), { workerData: task });
      worker.once('message', () => resolve());
      worker.once('error', reject);
      worker.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`segment merge thread exited with code ${code}`))));
    });
    for (const f of [POSTINGS_FILE, INDEX_DB, MANIFEST_FILE]) fsyncFile(join(temp, f));
    fsyncDir(temp);
    renameSync(temp, join(this.path, name));
    fsyncDir(this.path);
    // The inputs' deletes are gone from the merged segment; its documents are learnt anew.
    for (const e of inputs) this.deleted.delete(e.name);
    const entry = this.locate({ name });
    const segments = [...this.committed.segments.slice(0, start), entry, ...this.committed.segments.slice(end)];
    const next: SegmentsManifest = { ...this.committed, generation: this.committed.generation + 1, segments };
    writeSegments(this.path, next);
    this.committed = next;
    // The inputs are no segment of the index now; readers that have them open keep their files.
    for (const e of inputs) {
      if (e.name === '.') for (const f of [POSTINGS_FILE, INDEX_DB, MANIFEST_FILE]) rmSync(join(this.path, f), { force: true });
      else rmSync(join(this.path, e.name), { recursive: true, force: true });
    }
    this.refreshes++;
    return { generation: next.generation };
  }

  private async commitNow(): Promise<{ generation: number }> {
    await this.flush();
    this.writeDeleteSets();
    if (this.pending.length === 0 && this.deletesFiles.size === 0 && this.seq === (this.committed.walSeq ?? 0)) return { generation: this.committed.generation };
    for (const s of this.pending) {
      const dir = join(this.path, s.name);
      for (const f of [POSTINGS_FILE, INDEX_DB, MANIFEST_FILE]) fsyncFile(join(dir, f));
      fsyncDir(dir);
    }
    // Delete files are fsynced as they are written; their names in their folders too.
    for (const name of this.deletesFiles.keys()) fsyncDir(join(this.path, name));
    fsyncDir(this.path);
    const next: SegmentsManifest = { ...this.committed, generation: this.committed.generation + 1, segments: this.currentSegments(), walSeq: this.seq };
    writeSegments(this.path, next);
    this.committed = next;
    this.pending = [];
    this.deletesFiles.clear();
    // Every logged operation is in a committed segment now.
    this.wal.truncate();
    return { generation: next.generation };
  }

  /** A reader of everything refreshed so far (committed or not). Close it when done. */
  reader(): IndexReader {
    return new IndexReader(this.path, { ...this.committed, segments: this.currentSegments() });
  }

  /** Commits (and merges, as commit() does), then releases the index to other writers. */
  async close(): Promise<void> {
    if (this.closed) return;
    if (this.timer) clearInterval(this.timer);
    try {
      await this.serial(async () => {
        await this.commitNow();
        await this.mergeNow();
      });
    } finally {
      this.closed = true;
      this.wal.close();
      this.lock.release();
    }
  }

  private checkOpen(): void {
    if (this.closed) throw new UserError('the writer is closed');
  }
}

function docBytes(d: InputDocument): number {
  return d.text.length + (d.title?.length ?? 0) + d.id.length;
}

/** Each document has a string id and text, and no id is given twice or taken (`taken`). */
function checkDocuments(list: readonly InputDocument[], taken: (id: string) => boolean): void {
  const seen = new Set<string>();
  for (const [i, d] of list.entries()) {
    if (!d || typeof d.id !== 'string' || typeof d.text !== 'string') throw new UserError(`document ${i} needs string "id" and "text"`);
    if (seen.has(d.id)) throw new UserError(`document id ${JSON.stringify(d.id)} is given twice`);
    if (taken(d.id)) throw new UserError(`add: a document with id ${JSON.stringify(d.id)} is in the index already (replace() replaces it)`);
    seen.add(d.id);
  }
}

function fsyncFile(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
