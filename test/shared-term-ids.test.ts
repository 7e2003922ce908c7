import { describe, expect, it } from 'vitest';
import { KnownTermIds, newSharedTermIds, SharedTermIds } from '../indexer/fill/shared-term-ids.js';

describe("a worker's shared local -> global term id table", () => {
  it('maps ids, and the worker sees the mapped prefix once the watermark passes it', () => {
    const buffer = newSharedTermIds();
    const main = new SharedTermIds(buffer);
    const worker = new KnownTermIds(buffer);
    expect(main.get(0)).toBe(-1);
    main.set(0, 40);
    main.set(2, 42); // 1 is not mapped yet: the watermark stays at 1
    worker.refresh();
    expect(worker.count).toBe(1);
    expect([...worker.ids.subarray(0, 1)]).toEqual([41]);
    main.set(1, 7);
    worker.refresh();
    expect(worker.count).toBe(3);
    expect([...worker.ids.subarray(0, 3)]).toEqual([41, 8, 43]); // global id + 1
    expect([main.get(0), main.get(1), main.get(2), main.get(3)]).toEqual([40, 7, 42, -1]);
  });

  it('grows past its first allocation on both sides', () => {
    const buffer = newSharedTermIds();
    const main = new SharedTermIds(buffer);
    const worker = new KnownTermIds(buffer);
    const n = 200_000;
    for (let local = 0; local < n; local++) main.set(local, n - local);
    worker.refresh();
    expect(worker.count).toBe(n);
    expect(worker.ids[0]).toBe(n + 1);
    expect(worker.ids[n - 1]).toBe(2);
    expect(main.get(n - 1)).toBe(1);
    expect(main.bytes).toBeGreaterThanOrEqual(4 * (n + 1));
  });

  it('past its shared capacity, maps on the main thread only: the worker sees the shared prefix', () => {
    const buffer = newSharedTermIds(4);
    const main = new SharedTermIds(buffer);
    const worker = new KnownTermIds(buffer);
    for (let local = 0; local < 10; local++) main.set(local, 100 + local);
    worker.refresh();
    expect(worker.count).toBe(4);
    expect([...worker.ids.subarray(0, 4)]).toEqual([101, 102, 103, 104]);
    expect(main.get(9)).toBe(109);
    expect(buffer.byteLength).toBe(4 * 5);
  });

  it('unpublished (one worker, which maps nothing itself), keeps the mapping on the main thread only', () => {
    const buffer = newSharedTermIds();
    const main = new SharedTermIds(buffer, false);
    const worker = new KnownTermIds(buffer);
    for (let local = 0; local < 10; local++) main.set(local, 100 + local);
    worker.refresh();
    expect(worker.count).toBe(0);
    expect(main.get(9)).toBe(109);
    expect(main.get(10)).toBe(-1);
  });
});
