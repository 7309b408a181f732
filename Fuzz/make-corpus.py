#!/usr/bin/env python3
"""Seed corpora for the fuzz targets, from the protocol test vectors (Protocol/vectors/*.json).

usage: make-corpus.py OUTPUT_DIR   (writes OUTPUT_DIR/FuzzFrames, FuzzMessages, FuzzValues)
"""
import json, os, sys

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Protocol", "vectors")
out = sys.argv[1]

def load(name):
    with open(os.path.join(root, name + ".json")) as f:
        return json.load(f)

def cases(vectors, *groups):
    for group in groups:
        for case in vectors.get(group, []):
            yield bytes.fromhex(case["hex"])

frames, messages, values = load("frames"), load("messages"), load("values")
compact = load("messages-v2")  # version 2 `changes` frames
corpora = {
    # The frame target reads its first byte as the limit and chunking: prefix each stream with a few choices.
    "FuzzFrames": [bytes([c]) + b for b in cases(frames, "valid", "invalid") for c in (0, 7, 255)]
                  + [bytes([255]) + b for b in cases(messages, "valid", "decodeOnly", "invalid")],
    "FuzzMessages": list(cases(messages, "valid", "decodeOnly", "invalid")) + list(cases(frames, "valid", "invalid"))
                    + list(cases(compact, "valid", "decodeOnly", "invalid")),
    "FuzzValues": list(cases(values, "valid", "invalid")),
}
# A whole conversation for the session: a hello, then every valid message after it. The hellos that offer
# version 2 (the fuzzed session speaks 1...2) are followed by version 2 batches too.
hello = [(bytes.fromhex(c["hex"]), c["message"]["maxVersion"]) for c in messages["valid"] if c["message"].get("type") == "hello"]
rest = [bytes.fromhex(c["hex"]) for c in messages["valid"] if c["message"].get("type") != "hello"]
compact_rest = [bytes.fromhex(c["hex"]) for group in ("valid", "decodeOnly") for c in compact[group]]
for h, highest in hello:
    others = [r for r in rest if highest < 2 or r[4] != 2] + (compact_rest if highest >= 2 else [])
    corpora["FuzzMessages"].append(h + b"".join(others))
    for r in others:
        corpora["FuzzMessages"].append(h + r)
    if highest >= 2:
        for c in compact["invalid"]:
            corpora["FuzzMessages"].append(h + bytes.fromhex(c["hex"]))

for target, inputs in corpora.items():
    folder = os.path.join(out, target)
    os.makedirs(folder, exist_ok=True)
    for i, data in enumerate(inputs):
        with open(os.path.join(folder, "vector-%03d" % i), "wb") as f:
            f.write(data)
    print("%s: %d seed inputs" % (target, len(inputs)))
