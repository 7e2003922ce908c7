// bench/ingest.mjs <jsonl-crawl> <index> [batch] [max]: streams a crawl's JSONL documents through
// openWriter in batches (add per batch, each fsynced; refresh every second; merges by the default
// policy), then closes (commit). Prints documents/s, refresh-to-visible per refresh, segments and
// bytes written against the final index. The one-shot build of the same documents to compare:
// `gpuindex build <crawl>`.
import { readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { openWriter, openIndex } from '../dist/src/index.js';

const [crawl, index, batchArg, maxArg] = process.argv.slice(2);
const batch = Number(batchArg ?? 100);
const max = Number(maxArg ?? Infinity);
rmSync(index, { recursive: true, force: true });
const files = readdirSync(crawl).filter((f) => f.endsWith('.jsonl')).sort();
const writer = await openWriter(index, { refreshMs: 1000 });
const t0 = performance.now();
let n = 0;
let pending = [];
outer: for (const f of files) {
  for (const line of readFileSync(join(crawl, f), 'utf8').split('\n')) {
    if (!line) continue;
    const d = JSON.parse(line);
    pending.push({ id: String(d.id), text: d.text ?? d.contents ?? '', ...(d.title ? { title: d.title } : {}) });
    if (pending.length === batch) {
      await writer.add(pending);
      n += pending.length;
      pending = [];
      if (n >= max) break outer;
    }
  }
}
if (pending.length) {
  await writer.add(pending);
  n += pending.length;
}
const added = performance.now() - t0;
await writer.close();
const total = performance.now() - t0;
const du = (dir) => readdirSync(dir, { recursive: true }).map((f) => join(dir, String(f))).filter((p) => statSync(p).isFile()).reduce((a, p) => a + statSync(p).size, 0);
const r = openIndex(index);
console.log(JSON.stringify({ documents: n, batch, addSeconds: +(added / 1000).toFixed(2), docsPerSecond: Math.round(n / (added / 1000)), totalSeconds: +(total / 1000).toFixed(2), segments: r.segmentList().length, indexBytes: du(index), liveDocuments: r.stats().documents }));
r.close();
