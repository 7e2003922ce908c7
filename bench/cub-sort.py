#!/usr/bin/env python3
"""CUB's radix sort on the same (termID, docID) blocks as `bench-sort`, for the reference column.

Keys are termID << 32 | docID as uint64, drawn as gpu/distributions.ts draws them (zipf over a
2^20-term vocabulary, uniform, sorted, few-terms; docIDs random except for sorted). Two calls:
- CuPy's `cupy.sort` of the keys alone (thrust, which dispatches to CUB's DeviceRadixSort);
- PyTorch's `torch.sort(stable=True)` of the keys with their indices (CUB's SortPairs).
Kernel time from CUDA events around the call, warm-up until the last three agree within 5 %
(at least 300 ms), then the median of --reps. Same random numbers as gpu/distributions.ts are not
needed: the distributions' shape is what a radix sort sees (digit passes and their skew).

    python3 bench/cub-sort.py --sizes 20,24 --dist zipf,uniform,sorted,few-terms --reps 5
"""
import argparse
import json
import math
import statistics
import time

import numpy as np


def make_keys(dist, n, rng):
    vocab = 1 << 20
    if dist == 'uniform':
        t = rng.integers(0, 2**32, n, dtype=np.uint64)
    elif dist == 'zipf':
        t = np.minimum(vocab - 1, np.floor(np.exp(rng.random(n) * math.log(vocab))) - 1).astype(np.uint64)
    elif dist == 'sorted':
        t = np.arange(n, dtype=np.uint64)
    elif dist == 'few-terms':
        t = rng.integers(0, 5, n, dtype=np.uint64)
    else:
        raise SystemExit(f'cub-sort: unknown distribution {dist}')
    d = np.arange(n, dtype=np.uint64) if dist == 'sorted' else rng.integers(0, 2**32, n, dtype=np.uint64)
    return (t << np.uint64(32)) | d


def timed(fn, sync_event, reps, warm_min_ms=300, warm_max_ms=10000):
    """Kernel ms of fn() by CUDA events: warm up until steady, then the median of reps."""
    def once():
        start, end = sync_event(), sync_event()
        start.record()
        fn()
        end.record()
        end.synchronize()
        return start_end_ms(start, end)

    t0, times = time.time(), []
    while True:
        times.append(once())
        elapsed = (time.time() - t0) * 1000
        last = times[-3:]
        steady = len(last) == 3 and max(last) <= 1.05 * min(last)
        if (elapsed >= warm_min_ms and steady) or elapsed >= warm_max_ms:
            break
    runs = [once() for _ in range(reps)]
    return statistics.median(runs), min(runs), max(runs), len(times), steady


def start_end_ms(start, end):
    return start.elapsed_time(end) if hasattr(start, 'elapsed_time') else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--sizes', default='20,24')
    ap.add_argument('--dist', default='zipf,uniform,sorted,few-terms')
    ap.add_argument('--reps', type=int, default=5)
    ap.add_argument('--json', action='store_true')
    a = ap.parse_args()
    rows = []
    rng = np.random.default_rng(1)
    import cupy
    import torch

    class CupyEvent:
        def __init__(self):
            self.e = cupy.cuda.Event()

        def record(self):
            self.e.record()

        def synchronize(self):
            self.e.synchronize()

        def elapsed_time(self, other):
            return cupy.cuda.get_elapsed_time(self.e, other.e)

    device = torch.cuda.get_device_name(0)
    for log2 in [int(s) for s in a.sizes.split(',')]:
        n = 1 << log2
        for dist in a.dist.split(','):
            keys = make_keys(dist, n, rng)
            want = np.sort(keys)
            # CuPy: keys only.
            src = cupy.asarray(keys)
            out = {}

            def cupy_sort():
                out['k'] = cupy.sort(src)

            ms, lo, hi, warm, steady = timed(cupy_sort, CupyEvent, a.reps)
            assert np.array_equal(cupy.asnumpy(out['k']), want), 'cupy.sort gave a wrong order'
            rows.append(dict(library='cupy.sort (CUB keys)', pairs=n, distribution=dist, kernel_ms=round(ms, 3),
                             min_ms=round(lo, 3), max_ms=round(hi, 3), gpairs_per_s=round(n / ms / 1e6, 2),
                             warmup_sorts=warm, steady=steady))
            del src, out['k']
            # PyTorch: keys and their indices (pairs). int64 keys: flip the top bit so that signed
            # order is the unsigned order.
            tk = torch.from_numpy((keys ^ np.uint64(1 << 63)).view(np.int64)).cuda()
            res = {}

            def torch_sort():
                res['r'] = torch.sort(tk, stable=True)

            ms, lo, hi, warm, steady = timed(torch_sort, lambda: torch.cuda.Event(enable_timing=True), a.reps)
            got = (res['r'].values.cpu().numpy().view(np.uint64)) ^ np.uint64(1 << 63)
            assert np.array_equal(got, want), 'torch.sort gave a wrong order'
            rows.append(dict(library='torch.sort stable (CUB pairs)', pairs=n, distribution=dist, kernel_ms=round(ms, 3),
                             min_ms=round(lo, 3), max_ms=round(hi, 3), gpairs_per_s=round(n / ms / 1e6, 2),
                             warmup_sorts=warm, steady=steady))
            del tk, res['r']
            torch.cuda.empty_cache()
            cupy.get_default_memory_pool().free_all_blocks()
    if a.json:
        print(json.dumps(dict(device=device, torch=torch.__version__, cupy=cupy.__version__, rows=rows), indent=1))
        return
    print(f'CUB reference on {device} (torch {torch.__version__}, cupy {cupy.__version__}); median of {a.reps} after warm-up')
    print('| library | pairs | distribution | kernel ms | min–max | G pairs/s | warm-up sorts |')
    print('|---|---|---|---|---|---|---|')
    for r in rows:
        print(f"| {r['library']} | 2^{int(math.log2(r['pairs']))} | {r['distribution']} | {r['kernel_ms']} | "
              f"{r['min_ms']}–{r['max_ms']} | {r['gpairs_per_s']} | {r['warmup_sorts']}{'' if r['steady'] else ' (not steady)'} |")


if __name__ == '__main__':
    main()
