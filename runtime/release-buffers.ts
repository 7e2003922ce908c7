/**
 * Frees ArrayBuffers now rather than at the next garbage collection, which may come late (after
 * the merge has allocated its own buffers): a block of millions of pairs would otherwise stay
 * resident beside them. The buffers are transferred into a message on a MessageChannel whose
 * two ends are then closed, which drops the message and its buffers; the arrays over them are
 * detached (length 0) afterwards.
 */
import { MessageChannel } from 'node:worker_threads';

export async function releaseBuffers(buffers: Iterable<ArrayBufferLike | undefined>): Promise<void> {
  const list = [...new Set(buffers)].filter((b): b is ArrayBuffer => b instanceof ArrayBuffer && b.byteLength > 0);
  if (list.length === 0) return;
  const { port1, port2 } = new MessageChannel();
  const closed = new Promise<void>((resolve) => port1.once('close', () => resolve()));
  port1.postMessage(null, list);
  port1.close();
  port2.close();
  await closed;
}
