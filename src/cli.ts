#!/usr/bin/env -S MALLOC_TRIM_THRESHOLD_=1048576 node
/**
 * The gpuindex command line: a thin layer over the library API (buildIndex, openIndex).
 * User mistakes print one line and exit 1; no stack traces unless GPUINDEX_DEBUG is set.
 */
// First: the EPIPE policy of stdout (before any worker pipes into it), then a build's parse
// workers, started while the rest loads.
import './cli-stdout.js';
import './cli-prestart.js';
import { existsSync, readFileSync } from 'node:fs';
import { Command, InvalidArgumentError } from 'commander';
import type { BuildSummary } from './build.js';
import { AbortError, UserError } from './shared/errors.js';
import type { BuildOptions, GpuSortChoice, PipelineChoice, SorterChoice } from './shared/options.js';
import { progressLine } from './progress.js';
import type { IndexReader } from './reader.js';
import { VERSION } from './version.js';
import { registerGpuCommands } from './cli-gpu.js';
import { registerBenchCommands } from './cli-bench.js';
import { registerCorpusCommands } from './cli-corpus.js';
import { formatCount } from './format-count.js';


/** A signal again within this long is the same signal delivered twice. */
const SIGNAL_REPEAT_MS = 1000;

const program = new Command();
program.name('gpuindex').description('GPU-accelerated inverted-index builder (BSBI with an in-place bitonic GPU sort)').version(VERSION);

function intOption(name: string) {
  return (v: string): number => {
    if (!/^\d+$/.test(v)) throw new InvalidArgumentError(`${name} must be a non-negative integer`);
    return Number(v);
  };
}

function floatOption(name: string) {
  return (v: string): number => {
    const x = v.trim() === '' ? Number.NaN : Number(v);
    if (!Number.isFinite(x)) throw new InvalidArgumentError(`${name} must be a number`);
    return x;
  };
}

/** "--fields text=body,abstract;title=headline;id=docno" -> { text: [...], title: [...], id: [...] } */
export function parseFieldsSpec(spec: string): NonNullable<BuildOptions['fields']> {
  const out: NonNullable<BuildOptions['fields']> = {};
  for (const part of spec.split(';').map((p) => p.trim()).filter(Boolean)) {
    const m = /^(id|title|text)\s*=\s*(.+)$/.exec(part);
    if (!m) throw new InvalidArgumentError(`cannot read "${part}" (expected id=..., title=... or text=..., separated by ';')`);
    out[m[1] as 'id' | 'title' | 'text'] = m[2]!.split(',').map((f) => f.trim()).filter(Boolean);
  }
  return out;
}

const mib = (bytes: number): string => (bytes / 2 ** 20).toFixed(0);

/**
 * Each command loads its modules when it runs (the build's, the reader's, the exporter's), not
 * every command's at start-up: `search` and `stats` start without the indexer.
 */
async function openIndex(path: string): Promise<IndexReader> {
  const reader = await import('./reader.js');
  return reader.openIndex(path);
}

/** The phases' times; a crawl that fitted in one block had no sort and no runs (merge/doc-order-postings.ts). */
function phases(s: BuildSummary): string {
  const writer = s.stages.writer?.busyMs ?? 0;
  if (s.blocks === 1 && s.runBytes === 0 && (s.stages.sort?.busyMs ?? 0) === 0)
    return `parse ${s.timings.parseSortMs} ms, merge ${s.timings.mergeMs} ms (one block, no sort: postings.bin written from it in ${writer} ms beside the lexicon)`;
  return `parse+sort ${s.timings.parseSortMs} ms (sorting ${s.stages.sort?.busyMs ?? 0} ms, writing runs ${writer} ms), merge ${s.timings.mergeMs} ms`;
}

function printSummary(s: BuildSummary): void {
  const mb = s.bytesRead / 1e6;
  const secs = s.timings.totalMs / 1000;
  const lines = [
    `indexed ${formatCount(s.documents)} documents (${mb.toFixed(1)} MB) into ${s.output}`,
    `  ${formatCount(s.terms)} terms, ${formatCount(s.postings)} postings, ${formatCount(s.pairs)} pairs in ${s.blocks} block(s) of ${formatCount(s.blockSize)}; pipeline ${s.pipeline}${s.gpuSort ? ` (${s.gpuSort})` : ''}, ${s.workers} worker(s)`,
    `  ${secs.toFixed(2)} s (${(s.documents / Math.max(secs, 1e-6)).toFixed(0)} docs/s, ${(mb / Math.max(secs, 1e-6)).toFixed(1)} MB/s): ${phases(s)}`,
    `  index ${(s.indexBytes / 1e6).toFixed(1)} MB, peak RSS ${(s.peakRssBytes / 2 ** 20).toFixed(0)} MiB`,
    `  memory: working set ${mib(s.memory.workingSetBytes)} MiB of --memory ${mib(s.memory.budgetBytes)} MiB (peak RSS less ${mib(s.memory.dictionaryBytes)} MiB of dictionary and document table; baseline ${mib(s.memory.baselineBytes)} MiB)`,
  ];
  if (s.skipped.count) lines.push(`  skipped ${s.skipped.count} file(s)/document(s); see the warnings above or --json`);
  const records = Object.entries(s.notIndexed);
  if (records.length) lines.push(`  not indexed (no fault): ${records.map(([what, n]) => `${formatCount(n)} ${what}`).join(', ')}`);
  if (s.unsupported.count) lines.push(`  not indexed: ${s.unsupported.count} file(s) of unsupported types; --verbose or --json lists them`);
  if (s.warnings.count) lines.push(`  ${s.warnings.count} document(s) indexed with a warning (see above or --json)`);
  process.stdout.write(lines.join('\n') + '\n');
}

program
  .command('build')
  .description('index a crawl folder (JSONL/JSON/HTML/text, gzipped or not)')
  .argument('<crawl>', 'crawl folder or file')
  .requiredOption('-o, --output <dir>', 'index folder to create')
  .option('--force', 'replace an existing index at the output path', false)
  .option('--memory <size>', 'memory budget: bounds peak RSS less the dictionary and document table (e.g. 1GiB, 256MiB; default 1GiB, or 256MiB a core above 4 cores)')
  .option('--block-size <pairs>', 'pairs per block (default: derived from --memory)', intOption('--block-size'))
  .option('--pipeline <kind>', 'schedule: auto | cpu (Indexcpu) | gpu (Indexgpu) | gpu+ (Indexgpu+, overlapped)', 'auto')
  .option('--sorter <kind>', 'block sorter: auto | gpu | cpu', 'auto')
  .option('--gpu-sort <kind>', 'GPU sorting algorithm: bsn (bitonic network, in place) | radix (LSD radix sort, a second block buffer on the GPU) | auto (radix when that fits the GPU and the memory plan)', 'bsn')
  .option('--workers <n>', 'parse worker threads (default: cores - 1, at most 32)', intOption('--workers'))
  .option('--merge-threads <n>', 'merge threads, each taking a range of terms (default: one per 5Mi pairs, at most one per parse worker)', intOption('--merge-threads'))
  .option('--stem <kind>', 'stemmer: porter | none', 'porter')
  .option('--stopwords <list>', 'stopwords: english | none | <file>', 'english')
  .option('--cjk <mode>', 'CJK segmentation: unigram | bigram', 'unigram')
  .option('--max-token-length <n>', 'drop tokens longer than n UTF-16 units, 1..65536 (default 255)', intOption('--max-token-length'))
  .option('--title-weight <n>', 'a title term counts n times in tf and length (BM25F field weight), 1..64 (default 2)', intOption('--title-weight'))
  .option('--fields <spec>', 'JSON fields, e.g. "text=body,abstract;title=headline;id=docno"', parseFieldsSpec)
  .option('--positions', 'store every term occurrence\'s position (positions.bin): phrase queries and title: queries', false)
  .option('--resume', 'checkpoint each run, and reuse the completed runs of an interrupted build of the same crawl and settings', false)
  .option('--shard <i/N|auto>', 'index shard i of N of the crawl (contiguous, byte-balanced); auto: the Slurm array task or Kubernetes completion index; join the shards with `gpuindex join`')
  .option('--json', 'print the build summary as JSON', false)
  .option('-q, --quiet', 'no warnings or progress on stderr', false)
  .option('--verbose', 'list each file of an unsupported type (images, stylesheets, ...), not only their count per extension', false)
  .action(async (crawl: string, o: Record<string, unknown>) => {
    const controller = new AbortController();
    let signalName: NodeJS.Signals | undefined;
    let signalAt = 0;
    const onSignal = (s: NodeJS.Signals) => {
      if (signalName === undefined) {
        signalName = s;
        signalAt = Date.now();
        return controller.abort();
      }
      // The same signal within a second is one sent twice: to this process and on by its parent
      // (a build in a child with a wider V8 pool, cli-v8-pool.ts). A later one ends the build now.
      if (s === signalName && Date.now() - signalAt < SIGNAL_REPEAT_MS) return;
      process.exit(s === 'SIGINT' ? 130 : 143);
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    const progress = progressLine(!o.quiet && process.stderr.isTTY === true);
    const warn = (m: string) => {
      if (o.quiet) return;
      progress.clear();
      process.stderr.write(`gpuindex: ${m}\n`);
    };
    try {
      const { buildIndex } = await import('./build.js');
      const summary = await buildIndex({
        input: crawl,
        output: o.output as string,
        force: o.force as boolean,
        memory: o.memory as string | undefined,
        memoryScope: 'process',
        blockSize: o.blockSize as number | undefined,
        sorter: o.sorter as SorterChoice,
        gpuSort: o.gpuSort as GpuSortChoice,
        pipeline: o.pipeline as PipelineChoice,
        workers: o.workers as number | undefined,
        stem: o.stem as 'porter' | 'none',
        stopwords: o.stopwords as string,
        cjk: o.cjk as 'unigram' | 'bigram',
        maxTokenLength: o.maxTokenLength as number | undefined,
        titleWeight: o.titleWeight as number | undefined,
        fields: o.fields as BuildOptions['fields'],
        resume: o.resume as boolean,
        ...(o.positions ? { positions: true } : {}),
        shard: o.shard as string | undefined,
        mergeThreads: o.mergeThreads as number | undefined,
        onWarning: warn,
        verbose: o.verbose as boolean,
        onProgress: progress.onProgress,
        signal: controller.signal,
      });
      progress.clear();
      if (o.json) process.stdout.write(JSON.stringify(summary, null, 2) + '\n');
      else printSummary(summary);
    } catch (err) {
      progress.clear();
      if (err instanceof AbortError && signalName) {
        const kept = o.resume ? '; completed runs are kept for --resume' : '';
        process.stderr.write(`gpuindex: interrupted (${signalName}); nothing was written to ${o.output}${kept}\n`);
        process.exit(signalName === 'SIGINT' ? 130 : 143);
      }
      throw err;
    }
  });

program
  .command('search')
  .description('BM25 search (k1=0.9, b=0.4): terms OR by default; AND, +required, -excluded; "phrase" and title:term on an index built with --positions')
  .argument('<index>', 'index folder')
  .argument('<query>', 'query (its terms analysed like the documents)')
  .option('-k <n>', 'number of hits', intOption('-k'), 10)
  .option('--k1 <x>', 'BM25 k1', floatOption('--k1'), 0.9)
  .option('--b <x>', 'BM25 b', floatOption('--b'), 0.4)
  .option('--explain', "each term's part of each hit's score (idf, tf, length)", false)
  .option('--json', 'print hits as JSON (with title and snippet, null where the source cannot be read)', false)
  .action(async (index: string, query: string, o: { k: number; k1: number; b: number; explain: boolean; json: boolean }) => {
    const reader = await openIndex(index);
    try {
      const { QueryError } = await import('./query/parse.js');
      let hits;
      try {
        hits = reader.search(query, { k: o.k, k1: o.k1, b: o.b, explain: o.explain });
      } catch (err) {
        // A malformed query exits 2 (as grep's syntax errors do), apart from other mistakes.
        if (!(err instanceof QueryError) || process.env.GPUINDEX_DEBUG) throw err;
        process.stderr.write(`gpuindex: ${err.message}\n`);
        process.exitCode = 2;
        return;
      }
      // Title and snippet from the crawl, for the hits shown only (src/snippets.ts); the
      // query's scored terms are marked (not its excluded ones, nor AND).
      const { hitTexts } = await import('./snippets.js');
      const bold = !o.json && process.stdout.isTTY === true;
      const scored = reader.queryTerms(query);
      const analyze = (text: string) => (text === query ? scored : reader.analyze(text));
      const options = bold ? { mark: (w: string) => `\x1b[1m${w}\x1b[22m` } : {};
      // Each segment's paths are relative to its own crawl (`gpuindex add` of another folder):
      // the hits of each segment are read from that segment's `input`.
      const segments = reader.segmentList();
      const bySegment = new Map<number, number[]>();
      hits.forEach((h, i) => {
        let si = segments.length - 1;
        while (si > 0 && segments[si]!.docBase > h.docId) si--;
        const list = bySegment.get(si);
        if (list) list.push(i);
        else bySegment.set(si, [i]);
      });
      const texts: Awaited<ReturnType<typeof hitTexts>> = new Array(hits.length);
      for (const [si, at] of bySegment) {
        const settings = { ...reader.settings, input: segments[si]!.settings.input };
        const some = await hitTexts({ settings, analyze }, at.map((i) => hits[i]!), query, options);
        at.forEach((i, j) => (texts[i] = some[j]!));
      }
      if (o.json) process.stdout.write(JSON.stringify(hits.map((h, i) => ({ ...h, ...texts[i] })), null, 2) + '\n');
      else if (hits.length === 0) process.stdout.write('no documents match\n');
      else {
        for (const [i, h] of hits.entries()) {
          const { title, snippet } = texts[i]!;
          process.stdout.write(`${String(i + 1).padStart(3)}. ${h.score.toFixed(4)}  ${h.externalId}${h.path && h.path !== h.externalId ? `  (${h.path})` : ''}\n`);
          if (title) process.stdout.write(`     ${title}\n`);
          if (snippet) process.stdout.write(`     ${snippet}\n`);
          for (const c of h.explanation ?? [])
            process.stdout.write(
              `     ${c.score.toFixed(4)}  ${c.occur === 'must' ? '+' : ''}${c.term}: idf ${c.idf.toFixed(4)} (df ${c.df}) * tf ${c.tf} * (k1 + 1) / (tf + k1 * (1 - b + b * length ${c.length} / average ${c.averageLength.toFixed(1)}))${c.phrase ? `  [in ${c.phrase}]` : ''}\n`,
            );
        }
      }
    } finally {
      reader.close();
    }
  });

program
  .command('stats')
  .description('collection statistics and build settings')
  .argument('<index>', 'index folder')
  .option('--json', 'as JSON', false)
  .action(async (index: string, o: { json: boolean }) => {
    const reader = await openIndex(index);
    try {
      const segments = reader.manifest ? { generation: reader.manifest.generation, segments: reader.segmentList().map((g) => ({ path: g.path, docBase: g.docBase, documents: g.stats.documents, deleted: g.deleted, terms: g.stats.terms })) } : undefined;
      const out = { stats: reader.stats(), settings: reader.settings, ...(segments ? { segments } : {}) };
      if (o.json) process.stdout.write(JSON.stringify(out, null, 2) + '\n');
      else {
        for (const [k, v] of Object.entries(out.stats)) process.stdout.write(`${k.padEnd(18)} ${v}\n`);
        for (const [k, v] of Object.entries(out.settings)) process.stdout.write(`${k.padEnd(18)} ${typeof v === 'string' ? v : JSON.stringify(v)}\n`);
        if (segments) {
          process.stdout.write(`${'generation'.padEnd(18)} ${segments.generation}\n`);
          for (const g of segments.segments) process.stdout.write(`${'segment'.padEnd(18)} ${g.path}: ${g.documents} documents from docID ${g.docBase}${g.deleted ? ` (${g.deleted} deleted)` : ''}, ${g.terms} terms\n`);
        }
      }
    } finally {
      reader.close();
    }
  });

program
  .command('postings')
  .description("a term's postings list (the term is analysed like the documents)")
  .argument('<index>', 'index folder')
  .argument('<term>', 'term')
  .option('--json', 'as JSON', false)
  .action(async (index: string, term: string, o: { json: boolean }) => {
    const reader = await openIndex(index);
    try {
      const analysed = reader.analyze(term);
      if (analysed.length !== 1) throw new UserError(`"${term}" analyses to ${analysed.length} terms (${analysed.join(' ') || 'none'}); give one term`);
      const entry = reader.lexiconEntry(analysed[0]!);
      const { docIds, tfs } = reader.postingsOf(analysed[0]!);
      const postings = Array.from(docIds, (d, i) => ({ docId: d, tf: tfs[i]!, externalId: reader.document(d)?.externalId }));
      if (o.json) process.stdout.write(JSON.stringify({ term: analysed[0], df: entry?.df ?? 0, cf: entry?.cf ?? 0, postings }, null, 2) + '\n');
      else {
        process.stdout.write(`${analysed[0]}  df=${entry?.df ?? 0} cf=${entry?.cf ?? 0}\n`);
        for (const p of postings) process.stdout.write(`  ${p.docId}\t${p.tf}\t${p.externalId}\n`);
      }
    } finally {
      reader.close();
    }
  });

program
  .command('export')
  .description('export the index (CIFF, the Common Index File Format)')
  .argument('<index>', 'index folder')
  .requiredOption('-o, --output <file>', 'file to write (written beside it, then renamed into place)')
  .option('--format <format>', 'ciff', 'ciff')
  .option('--force', 'replace an existing file at the output path', false)
  .action(async (index: string, o: { output: string; format: string; force: boolean }) => {
    if (o.format !== 'ciff') throw new UserError(`unknown export format "${o.format}" (supported: ciff)`);
    const reader = await openIndex(index);
    try {
      const { exportCiff } = await import('./ciff/ciff.js');
      const r = exportCiff(reader, o.output, `gpuindex ${VERSION}; tokenizer ${JSON.stringify(reader.settings.tokenizer)}`, { force: o.force });
      process.stdout.write(`wrote ${o.output}: ${r.postingsLists} postings lists, ${r.docRecords} documents, ${(r.bytes / 1e6).toFixed(1)} MB\n`);
    } finally {
      reader.close();
    }
  });

program
  .command('verify')
  .description('check an index: file checksums, lexicon/postings consistency, document table, and segments.json against its segments')
  .argument('<index>', 'index folder')
  .action(async (index: string) => {
    const { verifyIndex, IndexDamage } = await import('../merge/verify.js');
    // Nothing at the path is the user's mistake (exit 1, as search and stats), not damage (exit 3).
    if (!existsSync(index)) throw new UserError(`not a gpuindex index: ${index} (no such file or folder)`);
    try {
      const r = verifyIndex(index);
      const inSegments = r.segments !== undefined ? ` in ${r.segments} segments (terms counted per segment)` : '';
      process.stdout.write(`ok: ${r.files} files, ${formatCount(r.terms)} terms, ${formatCount(r.postings)} postings, ${formatCount(r.documents)} documents${inSegments}\n`);
    } catch (err) {
      if (!(err instanceof IndexDamage)) throw err;
      process.stderr.write(`gpuindex: ${index}: ${err.message}\n`);
      process.exit(3);
    }
  });

program
  .command('add')
  .description('add a crawl to an index as a new segment, committed (the index is created if missing)')
  .argument('<index>', 'index folder')
  .argument('<crawl>', 'crawl folder or file, as build reads it')
  .option('--positions', 'create the index storing positions (an index that exists keeps its own: one built with --positions is added to with positions)')
  .option('--json', 'print the result as JSON', false)
  .action(async (index: string, crawl: string, o: { json: boolean; positions?: boolean }) => {
    const { openWriter } = await import('./writer.js');
    const writer = await openWriter(index, { refreshMs: 0, ...(o.positions ? { positions: true } : {}) });
    try {
      const r = await writer.addCrawl(crawl, { onWarning: (m) => process.stderr.write(`gpuindex: ${m}\n`) });
      if (o.json) process.stdout.write(JSON.stringify(r, null, 2) + '\n');
      else process.stdout.write(`added ${formatCount(r.added)} documents to ${index} (generation ${r.generation})\n`);
    } finally {
      await writer.close();
    }
  });

program
  .command('delete')
  .description('delete documents by id, committed')
  .argument('<index>', 'index folder')
  .argument('[ids...]', 'external ids')
  .option('--from-file <file>', 'more ids, one a line')
  .action(async (index: string, ids: string[], o: { fromFile?: string }) => {
    const all = [...ids];
    if (o.fromFile) all.push(...readFileSync(o.fromFile, 'utf8').split('\n').filter((l) => l !== ''));
    if (all.length === 0) throw new UserError('delete: give ids, or --from-file');
    const { openWriter } = await import('./writer.js');
    const writer = await openWriter(index, { refreshMs: 0 });
    try {
      const r = await writer.delete(all);
      const { generation } = await writer.commit();
      process.stdout.write(`deleted ${formatCount(r.deleted)} of ${formatCount(all.length)} ids from ${index} (generation ${generation})\n`);
    } finally {
      await writer.close();
    }
  });

program
  .command('join')
  .description('one index of the shards of a crawl (build --shard i/N): their files become its segments, unchanged')
  .argument('<index>', 'index folder to create')
  .argument('<shards...>', 'the shard index folders, all N of them')
  .option('--force', 'replace an existing index folder', false)
  .option('--json', 'print the result as JSON', false)
  .action(async (index: string, shards: string[], o: { force: boolean; json: boolean }) => {
    const { joinShards } = await import('./join.js');
    const r = joinShards(index, shards, o.force);
    if (o.json) process.stdout.write(JSON.stringify(r, null, 2) + '\n');
    else process.stdout.write(`joined ${r.segments} shards into ${r.output}: ${formatCount(r.documents)} documents, ${(r.ms / 1000).toFixed(2)} s\n`);
  });

program
  .command('optimize')
  .description("merge an index's segments into one")
  .argument('<index>', 'index folder')
  .option('--json', 'print the result as JSON', false)
  .action(async (index: string, o: { json: boolean }) => {
    const { optimizeIndex } = await import('./optimize.js');
    const r = optimizeIndex(index);
    if (o.json) process.stdout.write(JSON.stringify(r, null, 2) + '\n');
    else if (!r.rewritten) process.stdout.write(`${index} is one segment already\n`);
    else process.stdout.write(`merged ${r.segments} segment${r.segments === 1 ? '' : 's'}: ${formatCount(r.documents)} documents, ${formatCount(r.terms)} terms, ${(r.postingsBytes / 1e6).toFixed(1)} MB of postings in ${(r.ms / 1000).toFixed(2)} s\n`);
  });

registerGpuCommands(program);
registerBenchCommands(program);
registerCorpusCommands(program);

function userMessage(err: unknown): string | undefined {
  if (err instanceof UserError || err instanceof InvalidArgumentError) return err.message;
  // A damaged index file found while reading (merge/segment-reader.ts; not imported here, as the
  // CLI loads the reader only for the commands that read).
  if (err instanceof Error && err.name === 'SegmentFormatError') return err.message;
  const e = err as NodeJS.ErrnoException;
  if (e && typeof e.code === 'string' && ['ENOENT', 'EACCES', 'EEXIST', 'ENOSPC', 'EROFS', 'ENOTDIR', 'EISDIR'].includes(e.code)) return e.message;
  return undefined;
}

program.parseAsync(process.argv).catch((err: unknown) => {
  const msg = userMessage(err);
  if (msg && !process.env.GPUINDEX_DEBUG) {
    process.stderr.write(`gpuindex: ${msg}\n`);
    process.exit(1);
  }
  process.stderr.write(`gpuindex: internal error: ${(err as Error)?.stack ?? String(err)}\n`);
  process.exit(2);
});
