/**
 * Writes a folder of web pages as a WARC 1.1 file the way a crawler stores a crawl: a warcinfo
 * record, then for each file a request, a response (HTTP/1.1 200 with the page as its body)
 * and a metadata record, each its own gzip member (Common Crawl's layout). Files are taken in
 * gpuindex's crawl order (names sorted by UTF-16 code units, folders depth-first), so a build
 * of the folder and of the WARC meet the same pages in the same order.
 *
 *   node scripts/corpus/warc-writer.mjs <folder> <out.warc.gz> [--base-uri URI]
 *
 * Deterministic: record ids are name-based UUIDs of the URI, dates the files' mtimes.
 */
import { createHash } from 'node:crypto';
import { closeSync, openSync, readdirSync, readFileSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';

const CRLF = '\r\n';

/** A UUID from a name (SHA-1, version 5 layout), as <urn:uuid:...>. */
export function recordId(name) {
  const h = createHash('sha1').update(name).digest();
  h[6] = (h[6] & 0x0f) | 0x50;
  h[8] = (h[8] & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString('hex');
  return `<urn:uuid:${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}>`;
}

/** One record: version line, headers (in the given order), Content-Length, block, CRLF CRLF. */
export function warcRecord(headers, block) {
  const body = Buffer.isBuffer(block) ? block : Buffer.from(block);
  const lines = ['WARC/1.1', ...Object.entries(headers).filter(([, v]) => v !== undefined).map(([k, v]) => `${k}: ${v}`), `Content-Length: ${body.length}`];
  return Buffer.concat([Buffer.from(lines.join(CRLF) + CRLF + CRLF, 'latin1'), body, Buffer.from(CRLF + CRLF)]);
}

/** An HTTP/1.1 200 response carrying `body`. */
export function httpResponse(body, contentType, extraHeaders = {}) {
  const head = ['HTTP/1.1 200 OK', `Content-Type: ${contentType}`, `Content-Length: ${body.length}`, ...Object.entries(extraHeaders).map(([k, v]) => `${k}: ${v}`)];
  return Buffer.concat([Buffer.from(head.join(CRLF) + CRLF + CRLF, 'latin1'), body]);
}

const MEDIA = { html: 'text/html', htm: 'text/html', xhtml: 'application/xhtml+xml', txt: 'text/plain', css: 'text/css', js: 'text/javascript', png: 'image/png', svg: 'image/svg+xml', gif: 'image/gif', jpg: 'image/jpeg' };
export const mediaTypeOfName = (name) => MEDIA[name.slice(name.lastIndexOf('.') + 1).toLowerCase()] ?? 'application/octet-stream';

/** Regular files under dir in gpuindex's crawl order ('/'-separated relative paths). */
export function crawlOrder(dir) {
  const out = [];
  const walk = (d, rel) => {
    const ents = readdirSync(d, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const e of ents) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) walk(join(d, e.name), r);
      else if (e.isFile()) out.push(r);
    }
  };
  walk(dir, '');
  return out;
}

/** The request, response and metadata records of one page. */
export function pageRecords(uri, date, body, contentType) {
  const host = new URL(uri).host;
  const responseId = recordId(`response ${uri}`);
  const request = warcRecord(
    { 'WARC-Type': 'request', 'WARC-Record-ID': recordId(`request ${uri}`), 'WARC-Date': date, 'WARC-Target-URI': uri, 'WARC-Concurrent-To': responseId, 'Content-Type': 'application/http; msgtype=request' },
    `GET ${new URL(uri).pathname} HTTP/1.1${CRLF}Host: ${host}${CRLF}User-Agent: gpuindex-corpus${CRLF}${CRLF}`,
  );
  const http = httpResponse(body, contentType);
  const response = warcRecord(
    {
      'WARC-Type': 'response', 'WARC-Record-ID': responseId, 'WARC-Date': date, 'WARC-Target-URI': uri,
      'WARC-Payload-Digest': `sha1:${createHash('sha1').update(body).digest('hex')}`, 'Content-Type': 'application/http; msgtype=response',
    },
    http,
  );
  const metadata = warcRecord(
    { 'WARC-Type': 'metadata', 'WARC-Record-ID': recordId(`metadata ${uri}`), 'WARC-Date': date, 'WARC-Target-URI': uri, 'WARC-Concurrent-To': responseId, 'Content-Type': 'application/warc-fields' },
    `fetchTimeMs: 1${CRLF}`,
  );
  return [request, response, metadata];
}

/**
 * Writes the files under `dir` (those `keep` accepts) to `out` as a .warc.gz, one gzip member a
 * record. Returns the counts and the bytes of the uncompressed WARC.
 */
export function writeWarcOfFolder(dir, out, { baseUri = 'http://docs.example/', keep = () => true, level = 6 } = {}) {
  const fd = openSync(out, 'w');
  let records = 0;
  let pages = 0;
  let rawBytes = 0;
  let gzBytes = 0;
  const put = (rec) => {
    const gz = gzipSync(rec, { level });
    writeSync(fd, gz);
    records++;
    rawBytes += rec.length;
    gzBytes += gz.length;
  };
  try {
    put(warcRecord({ 'WARC-Type': 'warcinfo', 'WARC-Record-ID': recordId(`warcinfo ${baseUri}`), 'WARC-Date': '2024-01-01T00:00:00Z', 'Content-Type': 'application/warc-fields' }, `software: gpuindex scripts/corpus/warc-writer.mjs${CRLF}format: WARC File Format 1.1${CRLF}`));
    for (const rel of crawlOrder(dir)) {
      if (!keep(rel)) continue;
      const full = join(dir, rel);
      const date = new Date(Math.floor(statSync(full).mtimeMs / 1000) * 1000).toISOString().replace('.000Z', 'Z');
      const uri = new URL(rel.split('/').map(encodeURIComponent).join('/'), baseUri).href;
      for (const rec of pageRecords(uri, date, readFileSync(full), mediaTypeOfName(rel))) put(rec);
      pages++;
    }
  } finally {
    closeSync(fd);
  }
  return { pages, records, rawBytes, gzBytes };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [dir, out, ...rest] = process.argv.slice(2);
  if (!dir || !out) {
    process.stderr.write('usage: node scripts/corpus/warc-writer.mjs <folder> <out.warc.gz> [--base-uri URI]\n');
    process.exit(2);
  }
  const i = rest.indexOf('--base-uri');
  const r = writeWarcOfFolder(dir, out, i >= 0 ? { baseUri: rest[i + 1] } : {});
  process.stdout.write(`${out}: ${r.pages} pages, ${r.records} records, ${(r.rawBytes / 1e6).toFixed(1)} MB of WARC, ${(r.gzBytes / 1e6).toFixed(1)} MB gzipped\n`);
}
