#!/usr/bin/env python3
"""What a delta catch-up costs SQLite alone, at two store sizes: is "flat in N" a property of the B-tree?

Builds a table with GroupSync's layout (entries keyed by suite and key, a unique index on seq) holding N
rows, checkpoints it, then, from a fresh connection each time (a cold page cache, as a daemon just
restarted), upserts k random keys in one synchronous=FULL transaction: what the receiver of a delta
catch-up does. Prints the time and the bytes the write-ahead log grew by, five trials per N.

Usage: delta_floor.py [k] (default 100); uses /tmp.
"""
import os
import random
import sqlite3
import sys
import time


def build(path, n):
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.executescript("""
        CREATE TABLE entries(suite TEXT NOT NULL, key TEXT NOT NULL, value BLOB, hlc_wall INTEGER NOT NULL,
          hlc_logical INTEGER NOT NULL, origin BLOB NOT NULL, seq INTEGER NOT NULL,
          PRIMARY KEY(suite, key)) WITHOUT ROWID;
        CREATE UNIQUE INDEX entries_by_seq ON entries(seq);""")
    origin = os.urandom(32)
    db.execute("BEGIN")
    for i in range(n):
        db.execute("INSERT INTO entries VALUES ('bench', ?, ?, ?, 0, ?, ?)",
                   ("key-%07d" % i, os.urandom(60), 1000 + i, origin, i + 1))
    db.execute("COMMIT")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()


def trial(path, n, k):
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA synchronous=FULL")
    seq = db.execute("SELECT max(seq) FROM entries").fetchone()[0]
    log_before = os.path.getsize(path + "-wal") if os.path.exists(path + "-wal") else 0
    start = time.perf_counter()
    db.execute("BEGIN IMMEDIATE")
    for j, i in enumerate(random.sample(range(n), k)):
        db.execute("INSERT INTO entries VALUES ('bench', ?, ?, ?, 0, ?, ?) ON CONFLICT(suite, key) DO UPDATE SET "
                   "value = excluded.value, hlc_wall = excluded.hlc_wall, origin = excluded.origin, seq = excluded.seq",
                   ("key-%07d" % i, os.urandom(60), 10**9 + j, os.urandom(32), seq + j + 1))
    db.execute("COMMIT")
    millis = (time.perf_counter() - start) * 1000
    grown = os.path.getsize(path + "-wal") - log_before
    db.close()
    return millis, grown


def main():
    k = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    for n in (10_000, 1_000_000):
        path = "/tmp/groupsync-delta-floor-%d.db" % n
        build(path, n)
        trials = [trial(path, n, k) for _ in range(5)]
        print("N = %9d: %s ms; log grew by %s bytes" % (
            n, ", ".join("%.2f" % t[0] for t in trials), ", ".join(str(t[1]) for t in trials)))
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(path + suffix):
                os.remove(path + suffix)


if __name__ == "__main__":
    main()
