#!/usr/bin/python3
"""Xapian query server for bench/search.mjs: reads one query a line on stdin (words separated by
spaces), answers one JSON line: the milliseconds (wall clock and CPU) of parsing the query (OR of the words, English
stemming, STEM_SOME as bench/xapian-index.py indexed) and taking the top k with their document
data, and the number of hits.

    /usr/bin/python3 bench/search-xapian.py <db> <k>
"""
import json
import sys
import time

import xapian


def main(argv):
    db = xapian.Database(argv[0])
    k = int(argv[1])
    qp = xapian.QueryParser()
    qp.set_stemmer(xapian.Stem('english'))
    qp.set_stemming_strategy(xapian.QueryParser.STEM_SOME)
    qp.set_default_op(xapian.Query.OP_OR)
    enquire = xapian.Enquire(db)
    for line in sys.stdin:
        words = line.split()
        c0 = time.process_time()
        t0 = time.perf_counter()
        enquire.set_query(qp.parse_query(' '.join(words)))
        mset = enquire.get_mset(0, k)
        ids = [m.document.get_data() for m in mset]
        ms = (time.perf_counter() - t0) * 1000
        cpu_ms = (time.process_time() - c0) * 1000
        sys.stdout.write(json.dumps({'ms': ms, 'cpuMs': cpu_ms, 'hits': len(ids)}) + '\n')
        sys.stdout.flush()
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
