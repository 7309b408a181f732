#!/usr/bin/env python3
"""Draws Benchmarks/results/catchup.png from results.json: catch-up cost against store size.

Left: time until the catching-up device holds everything (log-log). Right: bytes on the wire (or, for the
in-process Yjs peer, bytes of the update). Usage: chart.py results.json catchup.png
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

STYLE = {
    "GroupSync bulk catch-up": ("tab:blue", "o", "-"),
    "Redis full resync": ("tab:red", "s", "-"),
    "Yjs full-state update": ("tab:green", "^", "-"),
    "SQLite upsert floor": ("tab:gray", "x", ":"),
    "GroupSync delta catch-up, k=100": ("tab:blue", "o", "--"),
    "Yjs state-vector diff, k=100": ("tab:green", "^", "--"),
}


def main():
    results = json.load(open(sys.argv[1]))
    series = results.get("chart", {})
    env = results.get("environment", {})
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 5))
    for name in sorted(series, key=lambda s: list(STYLE).index(s) if s in STYLE else 99):
        points = sorted(series[name], key=lambda p: p["n"])
        color, marker, line = STYLE.get(name, (None, ".", "-"))
        xs = [p["n"] for p in points]
        left.plot(xs, [p["millis"] for p in points], marker=marker, linestyle=line, color=color, label=name)
        with_bytes = [p for p in points if p.get("bytes") is not None]
        if with_bytes:
            right.plot([p["n"] for p in with_bytes], [p["bytes"] for p in with_bytes], marker=marker,
                       linestyle=line, color=color, label=name)
    for axis, label in ((left, "time until current (ms)"), (right, "bytes on the wire")):
        axis.set_xscale("log")
        axis.set_yscale("log")
        axis.set_xlabel("keys in the store (N)")
        axis.set_ylabel(label)
        axis.grid(True, which="both", alpha=0.3)
    left.legend(fontsize=8)
    fig.suptitle("Catch-up cost against store size — %s run, %s, %s cores, commit %s"
                 % (env.get("mode", "?"), env.get("date", "?")[:10], env.get("cores", "?"), env.get("commit", "?")),
                 fontsize=10)
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=110)


if __name__ == "__main__":
    main()
