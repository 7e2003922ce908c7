#!/bin/bash
node dist/src/cli.js gen-corpus --size 8GB --seed 11 --file-size 32MB --vocabulary fixed -o /tmp/c8 2>&1 | tail -1
node dist/src/cli.js build corpus-samples -o /tmp/w --force >/dev/null 2>&1
for r in 1 2; do for m in 4GiB 8GiB 16GiB; do for p in gpu+ cpu; do
  node dist/src/cli.js build /tmp/c8 -o /tmp/i8 --force --memory $m --pipeline $p --json > /tmp/s8.json 2>/dev/null
  node -e "const j=require('/tmp/s8.json');const t=j.timings;console.log('$p $m r$r total', (t.totalMs/1000).toFixed(2), 'MB/s', (j.bytesRead/1e6/(t.totalMs/1000)).toFixed(0), 'parse+sort', (t.parseSortMs/1000).toFixed(2), 'merge', (t.mergeMs/1000).toFixed(2), 'runs', j.merge.runs, 'threadsMs', j.merge.threadsMs, 'appendMs', j.merge.appendMs, 'blockSize', j.blockSize, 'peak', (j.peakRssBytes/2**30).toFixed(2))"
done; done; done
