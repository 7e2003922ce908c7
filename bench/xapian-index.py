#!/usr/bin/python3
"""Xapian peer on JSONL: indexes title + text (the fields gpuindex reads by default) with the
Python bindings (Debian python3-xapian), English Snowball stemming (TermGenerator's default
STEM_SOME: unstemmed terms plus Z-prefixed stems), no stopper, one commit at the end.

    /usr/bin/python3 bench/xapian-index.py --db DIR [--no-positions] file.jsonl ...

Prints one JSON line: documents, ms.
"""
import json
import sys
import time

import xapian

ID = ('id', 'docid', '_id', 'url')
TEXT = ('contents', 'text', 'body')


def first(o, keys):
    for k in keys:
        v = o.get(k)
        if isinstance(v, str):
            return v
    return None


def main(argv):
    db_path = None
    positions = True
    files = []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == '--db':
            db_path = argv[i + 1]
            i += 1
        elif a == '--no-positions':
            positions = False
        else:
            files.append(a)
        i += 1
    if not db_path or not files:
        sys.stderr.write('usage: xapian-index.py --db DIR [--no-positions] file.jsonl ...\n')
        return 1
    t0 = time.time()
    db = xapian.WritableDatabase(db_path, xapian.DB_CREATE_OR_OVERWRITE)
    tg = xapian.TermGenerator()
    tg.set_stemmer(xapian.Stem('english'))
    index = tg.index_text if positions else tg.index_text_without_positions
    documents = 0
    bad = 0
    for f in files:
        with open(f, 'r', encoding='utf-8', errors='replace') as fh:
            for line in fh:
                if not line.strip():
                    continue
                try:
                    o = json.loads(line)
                except ValueError:
                    bad += 1
                    continue
                text = first(o, TEXT)
                if text is None:
                    bad += 1
                    continue
                documents += 1
                doc = xapian.Document()
                tg.set_document(doc)
                title = o.get('title')
                if isinstance(title, str) and title:
                    index(title)
                    tg.increase_termpos()
                index(text)
                ext = first(o, ID) or '%s:%d' % (f, documents)
                doc.set_data(ext)
                if len(ext) < 200:
                    doc.add_boolean_term('Q' + ext)
                db.add_document(doc)
    db.commit()
    db.close()
    sys.stdout.write(json.dumps({'documents': documents, 'bad': bad, 'ms': round((time.time() - t0) * 1000),
                                 'xapian': xapian.version_string()}) + '\n')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
