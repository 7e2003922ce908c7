/**
 * An ingestion service on gpuindex: documents arrive over HTTP, are indexed in batches, and
 * queries are served from the last complete index while the next one builds.
 *
 *   POST /documents   body: a JSON array of { id, text, title? } or NDJSON, one document a line
 *   POST /flush       index what has arrived now (otherwise every `batchSize` documents)
 *   GET  /search?q=white+whale&k=5
 *   GET  /stats
 *
 * BSBI builds whole indexes, so each batch builds a new generation over every document
 * received so far (kept in an append-only JSONL file) and swaps the reader when it is complete;
 * searches never see a half-built index.
 *
 * Run: npm run build && npx tsc -p examples && node examples/dist/ingest-service.js 8080 /tmp/ingest
 */
import { appendFileSync, mkdirSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { join } from 'node:path';
import { buildIndex, openIndex, type BuildSummary, type IndexReader, type InputDocument } from 'gpuindex';

export interface IngestServiceOptions {
  /** Working folder: the document log and the index generations. */
  dir: string;
  /** Index after this many new documents. Default 1000. */
  batchSize?: number;
}

export interface IngestService {
  server: Server;
  /** Indexes every document received so far; resolves with the build summary (undefined if nothing new). */
  flush(): Promise<BuildSummary | undefined>;
  close(): Promise<void>;
}

async function body(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function parseDocuments(text: string): InputDocument[] {
  const t = text.trim();
  const docs: unknown[] = t.startsWith('[') ? JSON.parse(t) : t.split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l));
  return docs.map((d, i) => {
    const o = d as Partial<InputDocument>;
    if (typeof o.id !== 'string' || typeof o.text !== 'string') throw new Error(`document ${i}: needs string "id" and "text"`);
    return { id: o.id, text: o.text, ...(typeof o.title === 'string' ? { title: o.title } : {}) };
  });
}

export function createIngestService(options: IngestServiceOptions): IngestService {
  const batchSize = options.batchSize ?? 1000;
  const crawl = join(options.dir, 'crawl');
  const log = join(crawl, 'documents.jsonl');
  mkdirSync(crawl, { recursive: true });
  let received = 0;
  let indexed = 0;
  let generation = 0;
  let reader: IndexReader | undefined;
  let readerDir: string | undefined;
  let building: Promise<BuildSummary | undefined> = Promise.resolve(undefined);

  const build = async (): Promise<BuildSummary | undefined> => {
    if (received === indexed) return undefined;
    const upTo = received;
    const output = join(options.dir, `index-${++generation}`);
    const summary = await buildIndex({ input: crawl, output, sorter: 'cpu', workers: 1, memory: '256MiB' });
    const previous = { reader, readerDir };
    reader = openIndex(output); // the swap: later searches use the new generation
    readerDir = output;
    indexed = upTo;
    previous.reader?.close();
    if (previous.readerDir) rmSync(previous.readerDir, { recursive: true, force: true });
    return summary;
  };
  // Builds run one after another; a flush waits for the one in progress and starts the next.
  const flush = (): Promise<BuildSummary | undefined> => (building = building.then(build, build));

  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const send = (status: number, value: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(value));
    };
    try {
      if (req.method === 'POST' && url.pathname === '/documents') {
        const docs = parseDocuments(await body(req));
        appendFileSync(log, docs.map((d) => JSON.stringify(d) + '\n').join(''));
        received += docs.length;
        if (received - indexed >= batchSize) void flush();
        return send(202, { accepted: docs.length, received, indexed });
      }
      if (req.method === 'POST' && url.pathname === '/flush') {
        const summary = await flush();
        return send(200, { indexed, documents: summary?.documents ?? reader?.stats().documents ?? 0 });
      }
      if (req.method === 'GET' && url.pathname === '/search') {
        if (!reader) return send(503, { error: 'no index yet: POST /flush or wait for a batch' });
        const k = Number(url.searchParams.get('k') ?? 10);
        return send(200, { generation, hits: reader.search(url.searchParams.get('q') ?? '', { k }) });
      }
      if (req.method === 'GET' && url.pathname === '/stats') return send(200, { received, indexed, generation, stats: reader?.stats() ?? null });
      send(404, { error: `no route ${req.method} ${url.pathname}` });
    } catch (err) {
      send(400, { error: (err as Error).message });
    }
  });

  return {
    server,
    flush,
    async close() {
      await building.catch(() => undefined);
      await new Promise<void>((resolve) => server.close(() => resolve()));
      reader?.close();
    },
  };
}

// Run as a program: node examples/dist/ingest-service.js [port] [dir]
if (process.argv[1] && /ingest-service\.js$/.test(process.argv[1])) {
  const port = Number(process.argv[2] ?? 8080);
  const service = createIngestService({ dir: process.argv[3] ?? '/tmp/gpuindex-ingest' });
  service.server.listen(port, () => console.log(`ingest service on http://localhost:${port}`));
}
