/**
 * The build's progress line on stderr (only when stderr is a TTY): documents, MB of text,
 * blocks sorted, rate, stage; redrawn in place, built on the ProgressEvent stream of the API.
 */
import type { ProgressEvent } from './shared/options.js';
import { formatCount } from './format-count.js';

export function progressLine(isTty: boolean): { onProgress: (e: ProgressEvent) => void; clear: () => void } {
  if (!isTty) return { onProgress: () => {}, clear: () => {} };
  const start = performance.now();
  let drawn = false;
  return {
    onProgress(e) {
      const secs = (performance.now() - start) / 1000;
      const mb = e.bytes / 1e6;
      const stage = e.stage === 'merge' ? `merging ${Math.round((e.mergeFraction ?? 0) * 100)}%` : e.stage;
      const pct = e.stage === 'parse' && e.parseFraction !== undefined ? ` ${Math.round(e.parseFraction * 100)}%` : '';
      const eta = e.etaSeconds !== undefined ? `  ETA ${Math.ceil(e.etaSeconds)} s` : '';
      const line = `${stage}${pct}  ${formatCount(e.documents)} docs  ${mb.toFixed(1)} MB  ${(mb / Math.max(secs, 1e-3)).toFixed(1)} MB/s  ${e.blocksSorted} blocks  ${secs.toFixed(1)} s${eta}`;
      process.stderr.write(`\r\x1b[2K${line}`);
      drawn = true;
    },
    clear() {
      if (drawn) process.stderr.write('\r\x1b[2K');
    },
  };
}
