#!/usr/bin/env node
// Sums `node --trace-gc` lines of the main isolate (the first one to report) per segment of a
// bench log: each bench line closes a segment. Usage: node --trace-gc ... bench ... | node bench/gc-summary.mjs
import { createInterface } from 'node:readline';

let main;
const fresh = () => ({ scavenge: 0, scavengeMs: 0, markCompact: 0, markCompactMs: 0, other: 0, reasons: new Map(), heap: '' });
let seg = fresh();
const gcLine = /^\[\d+:(0x[0-9a-f]+)\]\s+\d+ ms: (Scavenge|Mark-Compact|Minor Mark-Compact|Mark-Compact \(reduce\))[^,]*, ([\d.]+) \/ ([\d.]+) ms/;
for await (const line of createInterface({ input: process.stdin })) {
  const m = gcLine.exec(line);
  if (m) {
    main ??= m[1];
    if (m[1] !== main) { seg.other++; continue; }
    if (m[2] === 'Scavenge') { seg.scavenge++; seg.scavengeMs += Number(m[3]); }
    else {
      seg.markCompact++;
      seg.markCompactMs += Number(m[3]);
      const reason = line.slice(line.lastIndexOf(')') + 1).replace(/;.*$/, '').trim();
      seg.reasons.set(reason, (seg.reasons.get(reason) ?? 0) + 1);
      seg.heap = line.slice(line.indexOf(m[2]) + m[2].length, line.indexOf(',', line.indexOf(m[2]))).trim();
    }
    continue;
  }
  if (!line.startsWith('[')) {
    console.log(line);
    if (/ parse| gpu\+| cpu /.test(line)) {
      console.log(`   main isolate GC since the last line: ${seg.scavenge} scavenges (${seg.scavengeMs.toFixed(0)} ms), ${seg.markCompact} mark-compacts (${seg.markCompactMs.toFixed(0)} ms pauses; ${[...seg.reasons].map(([r, n]) => `${n}x ${r}`).join(', ')}; last ${seg.heap} MB); other isolates' GC lines ${seg.other}`);
      seg = fresh();
    }
  }
}
