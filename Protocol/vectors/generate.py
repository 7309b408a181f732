#!/usr/bin/env python3
"""Writes the GroupSync protocol test vectors (values.json, messages.json, frames.json).

This is a second, independent encoder of the wire format in ../PROTOCOL.md, written from the
specification rather than from the Swift code: the Swift tests check that their encoder produces the
same bytes and their decoder the same meaning. Run it only to add vectors; never to "fix" a mismatch.
"""
import json
import struct
from pathlib import Path

# ---- primitives -------------------------------------------------------------------------------

def varint(n):
    assert 0 <= n < 2**64
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)

def zigzag(n):
    assert -2**63 <= n < 2**63
    return varint(((n << 1) ^ (n >> 63)) & (2**64 - 1))

def string(s):
    raw = s.encode("utf-8")
    return varint(len(raw)) + raw

def f64(d):
    return struct.pack(">d", d)

# ---- values (typed JSON meaning: a one-key object naming the type) -----------------------------

def value(v):
    (kind, x), = v.items()
    if kind == "string": return b"\x01" + string(x)
    if kind == "int": return b"\x02" + zigzag(x)
    if kind == "double": return b"\x03" + f64(x)
    if kind == "bool": return b"\x05" if x else b"\x04"
    if kind == "date": return b"\x06" + f64(x)
    if kind == "data": return b"\x07" + varint(len(bytes.fromhex(x))) + bytes.fromhex(x)
    if kind == "array": return b"\x08" + varint(len(x)) + b"".join(value(i) for i in x)
    if kind == "dictionary":
        # Keys in code point order (what Swift's String ordering gives for NFC keys).
        return b"\x09" + varint(len(x)) + b"".join(string(k) + value(x[k]) for k in sorted(x))
    raise ValueError(kind)

# ---- messages -------------------------------------------------------------------------------

TYPES = {"hello": 1, "changes": 2, "ack": 3, "request": 4, "ping": 5, "pong": 6, "goodbye": 7, "error": 8}

def change(c):
    out = varint(c["sequence"]) + string(c["suite"]) + string(c["key"])
    out += zigzag(c["hlcWall"]) + varint(c["hlcLogical"]) + bytes.fromhex(c["origin"])
    return out + (b"\x00" if c.get("tombstone") else value(c["value"]))

def payload(m):
    t = m["type"]
    if t == "hello":
        out = varint(m["minVersion"]) + varint(m["maxVersion"]) + string(m["deviceName"]) + string(m["storeID"])
        out += zigzag(m["physicalMillis"])
        if "resume" in m:
            out += b"\x01" + string(m["resume"]["storeID"]) + varint(m["resume"]["sequence"])
        else:
            out += b"\x00"
        return out
    if t == "changes":
        return varint(m["after"]) + varint(m["through"]) + varint(len(m["changes"])) + b"".join(change(c) for c in m["changes"])
    if t == "ack": return varint(m["sequence"])
    if t == "request": return varint(m["after"])
    if t == "ping": return zigzag(m["millis"])
    if t == "pong": return zigzag(m["echoMillis"]) + zigzag(m["millis"])
    if t in ("goodbye", "error"): return varint(m["code"]) + string(m["text"])
    raise ValueError(t)

def frame(type_byte, body):
    return struct.pack(">I", 1 + len(body)) + bytes([type_byte]) + body

def message_frame(m):
    return frame(TYPES[m["type"]], payload(m))

# ---- the vectors ----------------------------------------------------------------------------

ORIGIN_A = bytes(range(32)).hex()
ORIGIN_B = bytes([0xFF] * 32).hex()

VALUES = [
    ("empty string", {"string": ""}),
    ("string with non-ASCII", {"string": "héllo ✓"}),
    ("int 0", {"int": 0}),
    ("int 1 (zig-zag 2)", {"int": 1}),
    ("int -1 (zig-zag 1)", {"int": -1}),
    ("int 300 (two-byte varint)", {"int": 300}),
    ("int max", {"int": 2**63 - 1}),
    ("int min", {"int": -2**63}),
    ("double 0.25 (a usage threshold)", {"double": 0.25}),
    ("double 7.0 stays a double", {"double": 7.0}),
    ("double -0.0 keeps its sign bit", {"double": -0.0}),
    ("false", {"bool": False}),
    ("true", {"bool": True}),
    ("date 2024-11-29T13:20:00.25Z", {"date": 1732886400.25}),
    ("empty data", {"data": ""}),
    ("data", {"data": "00ff07"}),
    ("empty array", {"array": []}),
    ("nested array", {"array": [{"int": 7}, {"double": 7.0}, {"array": [{"bool": True}]}]}),
    ("empty dictionary", {"dictionary": {}}),
    ("dictionary keys sorted by code point", {"dictionary": {"z": {"int": 1}, "é": {"int": 2}, "a": {"string": "x"}}}),
    ("an action dictionary", {"dictionary": {"type": {"string": "blockSelection"}, "neverTriggerBefore": {"double": 1732886400000.0}}}),
]

INVALID_VALUES = [
    ("empty input", "", "truncated"),
    ("unknown tag 0 (a tombstone is not a value)", "00", "malformed"),
    ("unknown tag 10", "0a", "malformed"),
    ("string longer than the input", "010541", "truncated"),
    ("string that is not UTF-8", "0102c328", "malformed"),
    ("double NaN", "037ff8000000000000", "malformed"),
    ("double +infinity", "037ff0000000000000", "malformed"),
    ("date cut short", "06412345", "truncated"),
    ("array count beyond the input", "08ffffffff0f", "truncated"),
    ("dictionary with a duplicate key", "0902016b0201016b0202", "malformed"),
    ("varint longer than 64 bits", "02ffffffffffffffffff7f", "malformed"),
    ("trailing byte after a value", "0404", "malformed"),
]

MESSAGES = [
    ("hello, first contact", {"type": "hello", "minVersion": 1, "maxVersion": 1, "deviceName": "Anna's laptop",
                              "storeID": "5f1c2a9e", "physicalMillis": 1732886400000}),
    ("hello with a resume point", {"type": "hello", "minVersion": 1, "maxVersion": 3, "deviceName": "phone",
                                   "storeID": "b7", "physicalMillis": 1732886400123,
                                   "resume": {"storeID": "5f1c2a9e", "sequence": 1042}}),
    ("changes, empty (first batch of an up-to-date sender)", {"type": "changes", "after": 7, "through": 7, "changes": []}),
    ("changes, all entries filtered as echoes", {"type": "changes", "after": 7, "through": 9, "changes": []}),
    ("changes with a value and a tombstone", {"type": "changes", "after": 0, "through": 3, "changes": [
        {"sequence": 1, "suite": "group.app", "key": "balance", "hlcWall": 1732886400000, "hlcLogical": 3,
         "origin": ORIGIN_A, "value": {"double": 12.25}},
        {"sequence": 3, "suite": "group.app", "key": "gone", "hlcWall": 1732886400001, "hlcLogical": 0,
         "origin": ORIGIN_B, "tombstone": True},
    ]}),
    ("ack", {"type": "ack", "sequence": 1042}),
    ("ack of nothing yet", {"type": "ack", "sequence": 0}),
    ("request", {"type": "request", "after": 99}),
    ("ping", {"type": "ping", "millis": 1732886400000}),
    ("pong", {"type": "pong", "echoMillis": 1732886400000, "millis": 1732886400042}),
    ("goodbye", {"type": "goodbye", "code": 1, "text": "daemon stopping"}),
    ("error: clock skew", {"type": "error", "code": 6, "text": "clocks differ by 360000 ms"}),
    ("error with a code this version does not know", {"type": "error", "code": 300, "text": ""}),
]

hello = payload(MESSAGES[0][1])
DECODE_ONLY = [
    ("hello with fields appended by a later version", frame(1, hello + bytes.fromhex("0102ff")), MESSAGES[0][1]),
    ("an optional type (0x80-0xFF) is ignored", frame(0x80, bytes.fromhex("0102")), {"type": "ignored"}),
    ("an optional type with an empty payload", frame(0xFF, b""), {"type": "ignored"}),
]

entry = lambda seq: {"sequence": seq, "suite": "s", "key": "k", "hlcWall": 1, "hlcLogical": 0, "origin": ORIGIN_A, "value": {"int": 1}}
INVALID_MESSAGES = [
    ("type 0 is reserved", frame(0, b""), "unknownType"),
    ("unknown required type 0x09", frame(9, b""), "unknownType"),
    ("unknown required type 0x7f", frame(0x7F, b"\x00"), "unknownType"),
    ("hello cut short", frame(1, hello[:-3]), "malformed"),
    ("hello with an empty version range", frame(1, bytes.fromhex("0201") + hello[2:]), "malformed"),
    ("hello offering version 0", frame(1, bytes.fromhex("0001") + hello[2:]), "malformed"),
    ("hello with resume flag 2", frame(1, hello[:-1] + b"\x02"), "malformed"),
    ("hello with a device name over 255 bytes", frame(1, varint(1) + varint(1) + string("x" * 256) + string("s") + zigzag(0) + b"\x00"), "malformed"),
    ("changes ending before they start", frame(2, varint(5) + varint(4) + varint(0)), "malformed"),
    ("changes out of order", frame(2, varint(0) + varint(9) + varint(2) + change(entry(5)) + change(entry(5))), "malformed"),
    ("change at or before the batch start", frame(2, varint(1) + varint(9) + varint(1) + change(entry(1))), "malformed"),
    ("change beyond the batch end", frame(2, varint(0) + varint(9) + varint(1) + change(entry(10))), "malformed"),
    ("change count beyond the payload", frame(2, varint(0) + varint(9) + varint(1000)), "malformed"),
    ("change with a negative HLC wall time", frame(2, varint(0) + varint(9) + varint(1) + change({**entry(1), "hlcWall": -1})), "malformed"),
    ("change with a 33-bit logical counter", frame(2, varint(0) + varint(9) + varint(1) + change({**entry(1), "hlcLogical": 2**32})), "malformed"),
    ("change with a short origin", frame(2, varint(0) + varint(9) + varint(1) + varint(1) + string("s") + string("k") + zigzag(1) + varint(0) + bytes(31)), "malformed"),
    ("ack with a trailing byte", frame(3, varint(5) + b"\x00"), "malformed"),
    ("ack of a sequence beyond 2^63-1", frame(3, varint(2**63)), "malformed"),
    ("ping with no time", frame(5, b""), "malformed"),
    ("pong missing the responder's time", frame(6, zigzag(5)), "malformed"),
    ("goodbye text that is not UTF-8", frame(7, varint(1) + varint(1) + b"\xff"), "malformed"),
]

FRAMES = [
    ("one frame", frame(5, bytes.fromhex("8080")), [(5, "8080")]),
    ("a frame with an empty payload", frame(0x80, b""), [(0x80, "")]),
    ("two frames back to back", frame(3, b"\x01") + frame(4, b"\x02\x03"), [(3, "01"), (4, "0203")]),
]

INVALID_FRAMES = [
    ("length 0 has no type byte", "00000000", "empty", 0),
    ("one byte over the 4 MiB limit, refused from the header alone", "00400001", "oversize", 0),
    ("the largest length, refused from the header alone", "ffffffff", "oversize", 0),
    ("a good frame, then an oversize header", frame(3, b"\x01").hex() + "7fffffff", "oversize", 1),
]

def write(name, document):
    path = Path(__file__).with_name(name)
    path.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")

write("values.json", {
    "description": "ValueCodec: one tag byte, then the payload. A meaning is an object with one key naming the type.",
    "valid": [{"name": n, "hex": value(v).hex(), "value": v} for n, v in VALUES],
    "invalid": [{"name": n, "hex": h, "error": e} for n, h, e in INVALID_VALUES],
})
write("messages.json", {
    "description": "Messages as complete frames (4-byte length, type byte, payload). 'valid' must decode to the meaning and "
                   "encode back to the same bytes; 'decodeOnly' must decode to the meaning; 'invalid' must be refused.",
    "valid": [{"name": n, "hex": message_frame(m).hex(), "message": m} for n, m in MESSAGES],
    "decodeOnly": [{"name": n, "hex": f.hex(), "message": m} for n, f, m in DECODE_ONLY],
    "invalid": [{"name": n, "hex": f.hex(), "error": e} for n, f, e in INVALID_MESSAGES],
})
write("frames.json", {
    "description": "Framing of a byte stream with the default limit. 'valid' streams split into the frames listed; "
                   "'invalid' streams yield 'framesBefore' frames and then must be refused with 'error'.",
    "maxFrameBytes": 4 * 1024 * 1024,
    "valid": [{"name": n, "hex": h.hex(), "frames": [{"type": t, "payload": p} for t, p in fs]} for n, h, fs in FRAMES],
    "invalid": [{"name": n, "hex": h, "error": e, "framesBefore": k} for n, h, e, k in INVALID_FRAMES],
})
