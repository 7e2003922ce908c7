#!/usr/bin/env node
// Sums `node --trace-gc` lines per segment of a bench log (each bench line closes a segment): the
// main isolate's (the first one to report) in detail, the other isolates' (parse and merge
// workers) by kind and reason. Usage: node --trace-gc ... bench ... | node bench/gc-summary.mjs
import { createInterface } from 'node:readline';

let main;
const fresh = () => ({ scavenge: 0, scavengeMs: 0, markCompact: 0, markCompactMs: 0, other: 0, reasons: new Map(), heap: '', others: new Map() });
let seg = fresh();
const gcLine = /^\[\d+:(0x[0-9a-f]+)\]\s+\d+ ms: (Scavenge|Mark-Compact|Minor Mark-Compact|Mark-Compact \(reduce\))[^,]*, ([\d.]+) \/ ([\d.]+) ms/;
for await (const line of createInterface({ input: process.stdin })) {
  const m = gcLine.exec(line);
  if (m) {
    main ??= m[1];
    if (m[1] !== main) {
      seg.other++;
      const reason = m[2] === 'Scavenge' ? '' : ` (${line.slice(line.lastIndexOf(')') + 1).replace(/;.*$/, '').trim()})`;
      const k = `${m[2]}${reason}`;
      const o = seg.others.get(k) ?? { n: 0, ms: 0 };
      o.n++;
      o.ms += Number(m[3]);
      seg.others.set(k, o);
      continue;
    }
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
      console.log(`   other isolates: ${[...seg.others].sort((a, b) => b[1].n - a[1].n).map(([k, o]) => `${o.n}x ${k} ${o.ms.toFixed(0)} ms`).join('; ')}`);
      seg = fresh();
    }
  }
}
