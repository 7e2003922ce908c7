/** Worker-thread entry of HashThread: SHA-256 over the chunks it is handed, in order. */
import { createHash } from 'node:crypto';
import { parentPort } from 'node:worker_threads';

const port = parentPort!;
const hash = createHash('sha256');
port.on('message', (m: { chunk?: ArrayBuffer; length?: number; discard?: boolean; end?: boolean }) => {
  if (m.end) {
    port.postMessage({ digest: hash.digest('hex') });
    port.close();
    return;
  }
  hash.update(new Uint8Array(m.chunk!, 0, m.length!));
  if (!m.discard) port.postMessage({ chunk: m.chunk }, [m.chunk!]);
});
