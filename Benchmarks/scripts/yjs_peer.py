#!/usr/bin/env python3
"""The Yjs peer of the GroupSync bench, through pycrdt (Python bindings of Yrs, the Rust Yjs).

Builds a Y.Map of N keys with 80-byte string values (the same keys and values as the Swift bench), then
measures what a Yjs device would exchange:
  full  -- the full-state update a fresh device needs (bytes, encode + apply time);
  delta -- after k keys change, the state-vector diff an offline device needs (bytes of the diff and of
           the state vector it sends first, encode + apply time).
Everything runs in one process: no network, no disk. It is the lower bound of a Yjs sync, not a system.

Input: one JSON argument {"cases": [{"kind": "full"|"delta", "n": N, "k": K, "runs": R}, ...]}.
Output: one JSON object on stdout {"version": ..., "results": [...]} in the same order.
"""
import json
import sys
import time

SUITE = "group.com.example.bench"
VALUE_BYTES = 80


def key(i):
    return "key-%07d" % i


ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


def value(i, rnd=0):
    """The same 80 bytes as Seeding.value in the Swift bench: a prefix, then pseudo-random base64 characters."""
    out = "r%d-k%d-" % (rnd, i)
    x = ((i * 2654435761 + rnd * 40503 + 12345) & 0xFFFFFFFF) & 0x7FFFFFFF
    chars = []
    while len(out) + len(chars) < VALUE_BYTES:
        x = (x * 1103515245 + 12345) & 0x7FFFFFFF
        chars.append(ALPHABET[(x >> 16) & 63])
    return out + "".join(chars)


def build(n):
    from pycrdt import Doc, Map
    doc = Doc()
    m = doc.get(SUITE, type=Map)
    with doc.transaction():
        for i in range(n):
            m[key(i)] = value(i)
    return doc, m


def replica_of(doc):
    from pycrdt import Doc
    copy = Doc()
    copy.apply_update(doc.get_update())
    return copy


def full(n, runs, docs):
    doc, _ = docs.get(n) or docs.setdefault(n, build(n))
    out = {"kind": "full", "n": n, "bytes": [], "encode_ms": [], "apply_ms": []}
    from pycrdt import Doc
    for _ in range(runs):
        t0 = time.perf_counter()
        update = doc.get_update()
        t1 = time.perf_counter()
        fresh = Doc()
        fresh.apply_update(update)
        t2 = time.perf_counter()
        out["bytes"].append(len(update))
        out["encode_ms"].append((t1 - t0) * 1e3)
        out["apply_ms"].append((t2 - t1) * 1e3)
    return out


def delta(n, k, runs, docs, rounds):
    doc, m = docs.get(n) or docs.setdefault(n, build(n))
    out = {"kind": "delta", "n": n, "k": k, "diff_bytes": [], "sv_bytes": [], "encode_ms": [], "apply_ms": []}
    for _ in range(runs):
        offline = replica_of(doc)
        rounds[n] = rounds.get(n, 0) + 1
        rnd = rounds[n]
        step = max(1, n // k)
        with doc.transaction():
            for j in range(k):
                i = (j * step) % n
                m[key(i)] = value(i, rnd)
        t0 = time.perf_counter()
        sv = offline.get_state()
        diff = doc.get_update(sv)
        t1 = time.perf_counter()
        offline.apply_update(diff)
        t2 = time.perf_counter()
        out["diff_bytes"].append(len(diff))
        out["sv_bytes"].append(len(sv))
        out["encode_ms"].append((t1 - t0) * 1e3)
        out["apply_ms"].append((t2 - t1) * 1e3)
    return out


def main():
    spec = json.loads(sys.argv[1])
    import pycrdt
    docs, rounds, results = {}, {}, []
    for case in spec["cases"]:
        if case["kind"] == "full":
            results.append(full(case["n"], case.get("runs", 3), docs))
        else:
            results.append(delta(case["n"], case["k"], case.get("runs", 3), docs, rounds))
    version = getattr(pycrdt, "__version__", "unknown")
    print(json.dumps({"version": version, "results": results}))


if __name__ == "__main__":
    main()
