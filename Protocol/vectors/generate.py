#!/usr/bin/env python3
"""Writes the GroupSync protocol test vectors (values.json, messages.json, frames.json).

This is a second, independent encoder of the wire format in ../PROTOCOL.md, written from the
specification rather than from the Swift code: the Swift tests check that their encoder produces the
same bytes and their decoder the same meaning. Run it only to add vectors; never to "fix" a mismatch.
"""
import json
import struct
import zlib
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
        # Keys in code point order as written, not normalized: Python's str order, the order of the UTF-8 bytes.
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
    ("dictionary keys sorted as written, not normalized (a decomposed e-acute sorts before f)",
     {"dictionary": {"e\u0301": {"int": 1}, "f": {"int": 2}, "\u00e9b": {"int": 3}}}),
]

# Valid values too deep to write as typed JSON (each level would be two JSON levels): they must decode, and
# encode back to the same bytes.
DEEP_VALUES = [
    ("64 nested arrays, the innermost empty: the deepest value", "0801" * 63 + "0800"),
    ("63 nested arrays around an int: 64 levels", "0801" * 63 + "0202"),
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
    ("65 nested arrays", "0801" * 64 + "0800", "malformed"),
    ("64 nested arrays around an int: 65 levels", "0801" * 64 + "0202", "malformed"),
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

# ---- version 2: compact `changes` (PROTOCOL.md §5.2.2) -----------------------------------------

def compact_body(m, extra_suites=()):
    """Tables in order of first use (a writer's choice; readers accept any order), then the changes."""
    suites, origins = list(extra_suites), []
    for c in m["changes"]:
        if c["suite"] not in suites: suites.append(c["suite"])
        if c["origin"] not in origins: origins.append(c["origin"])
    out = varint(len(suites)) + b"".join(string(x) for x in suites)
    out += varint(len(origins)) + b"".join(bytes.fromhex(o) for o in origins)
    out += varint(len(m["changes"]))
    previous_sequence, previous_wall = m["after"], 0
    for c in m["changes"]:
        out += varint(c["sequence"] - previous_sequence - 1) + varint(suites.index(c["suite"])) + string(c["key"])
        out += zigzag(c["hlcWall"] - previous_wall) + varint(c["hlcLogical"]) + varint(origins.index(c["origin"]))
        out += b"\x00" if c.get("tombstone") else value(c["value"])
        previous_sequence, previous_wall = c["sequence"], c["hlcWall"]
    return out

def raw_deflate(data, level=6):
    compressor = zlib.compressobj(level, zlib.DEFLATED, -15)
    return compressor.compress(data) + compressor.flush()

def compact_stored(m, body=None):
    return varint(m["after"]) + varint(m["through"]) + b"\x00" + (compact_body(m) if body is None else body)

def compact_deflated(m, level=6, body=None, declared=None):
    body = compact_body(m) if body is None else body
    return (varint(m["after"]) + varint(m["through"]) + b"\x01" + varint(len(body) if declared is None else declared)
            + raw_deflate(body, level))

def text(i):
    return {"string": "usage of app %d today: %d minutes, limit 90, last opened at 21:%02d" % (i, 3 * i, i)}

COMPACT_ONE = {"type": "changes", "after": 0, "through": 3, "changes": [
    {"sequence": 1, "suite": "group.app", "key": "balance", "hlcWall": 1732886400000, "hlcLogical": 3,
     "origin": ORIGIN_A, "value": {"double": 12.25}},
    {"sequence": 3, "suite": "group.app", "key": "gone", "hlcWall": 1732886400001, "hlcLogical": 0,
     "origin": ORIGIN_B, "tombstone": True},
]}
COMPACT_TWO_SUITES = {"type": "changes", "after": 40, "through": 50, "changes": [
    {"sequence": 41, "suite": "group.app", "key": "a", "hlcWall": 1732886400000, "hlcLogical": 0, "origin": ORIGIN_A, "value": {"int": 1}},
    {"sequence": 42, "suite": "group.other", "key": "b", "hlcWall": 1732886399000, "hlcLogical": 7, "origin": ORIGIN_A, "value": {"bool": True}},
    {"sequence": 50, "suite": "group.app", "key": "c", "hlcWall": 1732886400500, "hlcLogical": 0, "origin": ORIGIN_B, "value": {"string": "é"}},
]}
COMPACT_MANY = {"type": "changes", "after": 1000, "through": 1040, "changes": [
    {"sequence": 1001 + i, "suite": "group.com.example.usage", "key": "app.%d.minutes" % i, "hlcWall": 1732886400000 + 3 * i,
     "hlcLogical": i % 2, "origin": ORIGIN_A, "value": text(i)} for i in range(40)
]}

COMPACT_MESSAGES = [
    ("changes, empty (first batch of an up-to-date sender)", {"type": "changes", "after": 7, "through": 7, "changes": []}),
    ("changes, all entries filtered as echoes", {"type": "changes", "after": 7, "through": 9, "changes": []}),
    ("changes with a value and a tombstone, two origins", COMPACT_ONE),
    ("changes from two suites, a wall time that goes back, a gap", COMPACT_TWO_SUITES),
    ("forty changes of one suite and origin", COMPACT_MANY),
]

COMPACT_DECODE_ONLY = [
    ("deflated at level 6", compact_deflated(COMPACT_MANY), COMPACT_MANY),
    ("deflated at level 1 (any level decodes the same)", compact_deflated(COMPACT_MANY, level=1), COMPACT_MANY),
    ("deflated at level 9, a small batch", compact_deflated(COMPACT_TWO_SUITES, level=9), COMPACT_TWO_SUITES),
    ("a suite listed but not used", compact_stored(COMPACT_ONE, compact_body(COMPACT_ONE, extra_suites=["unused"])), COMPACT_ONE),
]

one = lambda **f: {"type": "changes", "after": 0, "through": 9, "changes": [{**entry(1), **f}]}
ONE = one()
MANY_BODY = compact_body(COMPACT_MANY)
head = varint(0) + varint(9)
ORIGIN_A_BYTES = bytes.fromhex(ORIGIN_A)
def body_of(changes_bytes, suites=("s",), origins=(ORIGIN_A_BYTES,), count=1):
    return (varint(len(suites)) + b"".join(string(x) for x in suites) + varint(len(origins)) + b"".join(origins)
            + varint(count) + changes_bytes)
plain_change = varint(0) + varint(0) + string("k") + zigzag(1) + varint(0) + varint(0) + value({"int": 1})
assert body_of(plain_change) == compact_body(ONE)
bomb = raw_deflate(bytes(1 << 20), 9)  # a megabyte of zeros in about a kilobyte

COMPACT_INVALID = [
    ("body encoding 2 is unknown", head + b"\x02" + compact_body(ONE), "malformed"),
    ("changes ending before they start", varint(5) + varint(4) + b"\x00" + body_of(b"", count=0), "malformed"),
    ("stored body with a byte after the changes", compact_stored(ONE) + b"\x00", "malformed"),
    ("stored body cut short", compact_stored(ONE)[:-1], "malformed"),
    ("deflated body declaring 0 bytes", head + b"\x01" + varint(0) + raw_deflate(b""), "malformed"),
    ("deflated body declaring more than the 4 MiB frame limit, refused before inflating", head + b"\x01" + varint(4 * 1024 * 1024 + 1) + bomb, "malformed"),
    ("a bomb: a megabyte of zeros declared as 1000 bytes", head + b"\x01" + varint(1000) + bomb, "malformed"),
    ("a deflated body that inflates to fewer bytes than declared", compact_deflated(COMPACT_MANY, declared=len(MANY_BODY) + 1), "malformed"),
    ("a deflated body cut short", compact_deflated(COMPACT_MANY)[:-2], "malformed"),
    ("a byte after the deflate stream", compact_deflated(COMPACT_MANY) + b"\x00", "malformed"),
    ("not a deflate stream (reserved block type)", head + b"\x01" + varint(10) + bytes.fromhex("ffffffff"), "malformed"),
    ("deflated body with a byte after the changes", head + b"\x01" + varint(len(compact_body(ONE)) + 1) + raw_deflate(compact_body(ONE) + b"\x00"), "malformed"),
    ("suite index beyond the table", head + b"\x00" + body_of(varint(0) + varint(1) + plain_change[2:]), "malformed"),
    ("origin index beyond the table", head + b"\x00" + body_of(plain_change[:-3] + varint(1) + value({"int": 1})), "malformed"),
    ("origin count beyond the payload", head + b"\x00" + varint(1) + string("s") + varint(1000) + ORIGIN_A_BYTES, "malformed"),
    ("a short origin in the table", head + b"\x00" + varint(1) + string("s") + varint(1) + bytes(31), "malformed"),
    ("change count beyond the payload", head + b"\x00" + body_of(b"", count=1000), "malformed"),
    ("sequence gap beyond the batch end", head + b"\x00" + body_of(varint(9) + plain_change[1:]), "malformed"),
    ("second change beyond the batch end", head + b"\x00" + body_of(plain_change + varint(8) + plain_change[1:], count=2), "malformed"),
    ("a wall time difference that makes it negative", head + b"\x00" + body_of(varint(0) + varint(0) + string("k") + zigzag(-1) + plain_change[-4:]), "malformed"),
    ("a 33-bit logical counter", head + b"\x00" + body_of(varint(0) + varint(0) + string("k") + zigzag(1) + varint(2**32) + varint(0) + value({"int": 1})), "malformed"),
]

def write(name, document):
    path = Path(__file__).with_name(name)
    path.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")

# ---- device IDs (§2) ---------------------------------------------------------------------------

BASE32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"

def base32(raw):
    bits = "".join(f"{b:08b}" for b in raw)
    bits += "0" * (-len(bits) % 5)
    return "".join(BASE32[int(bits[i:i + 5], 2)] for i in range(0, len(bits), 5))

def luhn32(run):
    factor, total = 1, 0
    for c in run:
        addend = factor * BASE32.index(c)
        factor = 1 if factor == 2 else 2
        total += addend // 32 + addend % 32
    return BASE32[(32 - total % 32) % 32]

def device_id_text(raw):
    encoded = base32(raw)
    assert len(encoded) == 52
    checked = "".join(encoded[i:i + 13] + luhn32(encoded[i:i + 13]) for i in range(0, 52, 13))
    return "-".join(checked[i:i + 7] for i in range(0, 56, 7))

DEVICE_IDS = [
    ("bytes 0 to 31", bytes(range(32))),
    ("all 0xff", bytes([0xFF] * 32)),
    ("all zero", bytes(32)),
    ("SHA-256 of the empty string", bytes.fromhex("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")),
]

def mistyped(text):
    # The first character of the second group changed: the check of the first run no longer matches.
    i = 8
    return text[:i] + ("B" if text[i] != "B" else "C") + text[i + 1:]

write("identity.json", {
    "description": "Device IDs (§2): 'valid' — the 32 bytes and their text form, which must read back to the bytes, also in "
                   "lower case and without dashes; 'invalid' — texts that must be refused.",
    "valid": [{"name": n, "bytes": raw.hex(), "text": device_id_text(raw)} for n, raw in DEVICE_IDS],
    "invalid": [{"name": "a mistyped character (wrong check)", "text": mistyped(device_id_text(DEVICE_IDS[0][1]))},
                {"name": "a group missing", "text": device_id_text(DEVICE_IDS[0][1])[8:]}],
})

write("values.json", {
    "description": "ValueCodec: one tag byte, then the payload. A meaning is an object with one key naming the type.",
    "valid": [{"name": n, "hex": value(v).hex(), "value": v} for n, v in VALUES],
    "deep": [{"name": n, "hex": h} for n, h in DEEP_VALUES],
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
write("messages-v2.json", {
    "description": "Protocol version 2 `changes` frames (PROTOCOL.md §5.2.2); every other message is as in messages.json. "
                   "'valid' are stored bodies: they must decode to the meaning and, encoded without compression, give the same "
                   "bytes. 'decodeOnly' must decode to the meaning (deflated bytes depend on the compressor, so they are not "
                   "canonical). 'invalid' must be refused as malformed, with a 4 MiB frame limit.",
    "valid": [{"name": n, "hex": frame(2, compact_stored(m)).hex(), "message": m} for n, m in COMPACT_MESSAGES],
    "decodeOnly": [{"name": n, "hex": frame(2, p).hex(), "message": m} for n, p, m in COMPACT_DECODE_ONLY],
    "invalid": [{"name": n, "hex": frame(2, p).hex(), "error": e} for n, p, e in COMPACT_INVALID],
})
