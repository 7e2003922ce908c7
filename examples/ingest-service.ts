/**
 * An ingestion service on gpuindex's writer: documents arrive over HTTP, are added, replaced or
 * deleted by id, and become searchable within the writer's refresh interval; nothing is rebuilt.
 *
 *   POST   /documents       body: a JSON array of { id, text, title? } or NDJSON, one a line;
 *                           adds each document, replacing the one of the same id
 *   DELETE /documents/:id   deletes a document
 *   POST   /flush           makes everything received searchable now (a refresh)
 *   GET    /search?q=white+whale&k=5
 *   GET    /stats
 *
 * A 202 means the operation is in the writer's log on disk: it survives a crash (kill -9), and
 * the next start replays it. The writer commits every `commitMs` and when the service closes.
 *
 * Run: npm run build && npx tsc -p examples && node examples/dist/ingest-service.js 8080 /tmp/ingest
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { openWriter, type IndexReader, type IndexWriter, type InputDocument } from 'gpuindex';

export interface IngestServiceOptions {
  /** The index folder (created when missing). */
  dir: string;
  /** Milliseconds between automatic refreshes while documents arrive. Default 1000. */
  refreshMs?: number;
  /** Milliseconds between commits. Default 10000. */
  commitMs?: number;
}

export interface IngestService {
  server: Server;
  writer: IndexWriter;
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

export async function createIngestService(options: IngestServiceOptions): Promise<IngestService> {
  const writer = await openWriter(options.dir, { refreshMs: options.refreshMs ?? 1000 });
  // The reader of the writer's last refresh, renewed when a refresh has changed the index.
  let reader: IndexReader | undefined;
  let readerAt = -1;
  const current = (): IndexReader => {
    if (!reader || readerAt !== writer.refreshes) {
      reader?.close();
      readerAt = writer.refreshes;
      reader = writer.reader();
    }
    return reader;
  };
  const committer = setInterval(() => void writer.commit().catch((err) => console.error(`commit failed: ${(err as Error).message}`)), options.commitMs ?? 10_000);
  committer.unref();

  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const send = (status: number, value: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(value));
    };
    try {
      if (req.method === 'POST' && url.pathname === '/documents') {
        const docs = parseDocuments(await body(req));
        const { added } = await writer.replace(docs);
        return send(202, { accepted: added });
      }
      const one = /^\/documents\/(.+)$/.exec(url.pathname);
      if (req.method === 'DELETE' && one) {
        const { deleted } = await writer.delete([decodeURIComponent(one[1]!)]);
        return send(deleted ? 202 : 404, { deleted });
      }
      if (req.method === 'POST' && url.pathname === '/flush') {
        await writer.refresh();
        return send(200, { documents: current().stats().documents });
      }
      if (req.method === 'GET' && url.pathname === '/search') {
        const k = Number(url.searchParams.get('k') ?? 10);
        return send(200, { hits: current().search(url.searchParams.get('q') ?? '', { k }) });
      }
      if (req.method === 'GET' && url.pathname === '/stats') return send(200, { stats: current().stats(), segments: current().segmentList().length });
      send(404, { error: `no route ${req.method} ${url.pathname}` });
    } catch (err) {
      send(400, { error: (err as Error).message });
    }
  });

  return {
    server,
    writer,
    async close() {
      clearInterval(committer);
      await new Promise<void>((resolve) => server.close(() => resolve()));
      reader?.close();
      await writer.close();
    },
  };
}

// Run as a program: node examples/dist/ingest-service.js [port] [dir]
if (process.argv[1] && /ingest-service\.js$/.test(process.argv[1])) {
  const port = Number(process.argv[2] ?? 8080);
  const service = await createIngestService({ dir: process.argv[3] ?? '/tmp/gpuindex-ingest' });
  service.server.listen(port, () => console.log(`ingest service on http://localhost:${port}`));
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => void service.close().then(() => process.exit(0)));
}
