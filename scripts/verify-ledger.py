#!/usr/bin/env python3
"""Verify a wallet ledger exported by `agentpact wallet ledger --wallet 0x... > ledger.jsonl` (issue 59).

Each line is {"body": "<compact JSON entry, exactly as hashed>", "hash": "0x<64 hex>", "signature": "0x<130 hex>"}.
A ledger verifies when, line after line:
  - the line is a JSON object with exactly those three string fields, and the body is a JSON object with
    exactly the fields v, seq, prev, at, chain_id, wallet, event, tool, amount, currency, counterparty, rule,
    reason, tx, policy in that order, each of the right type (addresses EIP-55 checksummed);
  - keccak256(UTF-8 bytes of body) = hash (original Keccak padding, as Ethereum uses, not SHA3-256);
  - seq is 1, 2, 3, ... and prev is the previous line's hash (the first line's is 32 zero bytes);
  - every body names the same wallet and chain_id (and the wallet given with --wallet, if any);
  - the signature (r || s || v, v = 27 or 28) is an EIP-191 personal_sign of the ASCII message
    "AgentPact wallet ledger entry 0x<hash in lowercase hex>" that recovers to the body's wallet.
It prints "ok: N entries, wallet 0x..., head 0x<hash>" and exits 0, or "line K: <the first problem>" and exits 1.
Entries cut off the END of a file cannot be detected from the file alone: compare the head hash with one you
kept (or with the server's) to know the ledger is complete.

Usage:  scripts/verify-ledger.py FILE [--wallet 0x...]      (FILE "-" reads standard input)
        scripts/verify-ledger.py --self-test                 (built-in known-answer checks, exit 0/1)
Python 3 standard library only.
"""
import argparse
import json
import re
import sys

# ---------------------------------------------------------------- keccak256
_RC = [0x0000000000000001, 0x0000000000008082, 0x800000000000808A, 0x8000000080008000, 0x000000000000808B,
       0x0000000080000001, 0x8000000080008081, 0x8000000000008009, 0x000000000000008A, 0x0000000000000088,
       0x0000000080008009, 0x000000008000000A, 0x000000008000808B, 0x800000000000008B, 0x8000000000008089,
       0x8000000000008003, 0x8000000000008002, 0x8000000000000080, 0x000000000000800A, 0x800000008000000A,
       0x8000000080008081, 0x8000000000008080, 0x0000000080000001, 0x8000000080008008]
_ROT = [[0, 36, 3, 41, 18], [1, 44, 10, 45, 2], [62, 6, 43, 15, 61], [28, 55, 25, 21, 56], [27, 20, 39, 8, 14]]
_M64 = (1 << 64) - 1
# Lane i = x + 5y: where rho+pi move it, by how much it rotates; the two lanes chi combines with it.
_PI = [((i // 5) + 5 * ((2 * (i % 5) + 3 * (i // 5)) % 5), _ROT[i % 5][i // 5]) for i in range(25)]
_CHI = [(i - i % 5 + (i + 1) % 5, i - i % 5 + (i + 2) % 5) for i in range(25)]


def _keccak_f(a):
    """Apply the Keccak-f[1600] permutation to the 25 lanes a[x + 5y] in place."""
    for rc in _RC:
        c = [a[x] ^ a[x + 5] ^ a[x + 10] ^ a[x + 15] ^ a[x + 20] for x in range(5)]
        d = [c[x - 1] ^ (((c[(x + 1) % 5] << 1) | (c[(x + 1) % 5] >> 63)) & _M64) for x in range(5)]
        b = [0] * 25
        for i, (dst, r) in enumerate(_PI):
            v = a[i] ^ d[i % 5]
            b[dst] = ((v << r) | (v >> (64 - r))) & _M64
        a[:] = [b[i] ^ (~b[j] & b[k]) for i, (j, k) in enumerate(_CHI)]
        a[0] ^= rc


def keccak256(data: bytes) -> bytes:
    """Return Ethereum's keccak256 of data (rate 136 bytes, padding 0x01 ... 0x80; not hashlib.sha3_256)."""
    rate = 136
    padded = bytearray(data) + b"\x01" + bytes(-(len(data) + 1) % rate)
    padded[-1] |= 0x80
    a = [0] * 25
    for off in range(0, len(padded), rate):
        for i in range(rate // 8):
            a[i] ^= int.from_bytes(padded[off + 8 * i:off + 8 * i + 8], "little")
        _keccak_f(a)
    return b"".join(a[i].to_bytes(8, "little") for i in range(4))


# ---------------------------------------------------------------- secp256k1 public-key recovery
P = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEFFFFFC2F
N = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141
G = (0x79BE667EF9DCBBAC55A06295CE870B07029BFCDB2DCE28D959F2815B16F81798,
     0x483ADA7726A3C4655DA4FBFC0E1108A8FD17B448A68554199C47D08FFB10D4B8)  # affine x, y


def _double(pt):
    """Double a point of y^2 = x^3 + 7 in Jacobian coordinates (X, Y, Z); None is the point at infinity."""
    if pt is None or pt[1] == 0:
        return None
    x, y, z = pt
    s, m = 4 * x * y * y % P, 3 * x * x % P
    x3 = (m * m - 2 * s) % P
    return x3, (m * (s - x3) - 8 * pow(y, 4, P)) % P, 2 * y * z % P


def _add(p1, p2):
    """Add two points in Jacobian coordinates (None is the point at infinity)."""
    if p1 is None or p2 is None:
        return p1 or p2
    (x1, y1, z1), (x2, y2, z2) = p1, p2
    u1, u2 = x1 * z2 * z2 % P, x2 * z1 * z1 % P
    s1, s2 = y1 * pow(z2, 3, P) % P, y2 * pow(z1, 3, P) % P
    if u1 == u2:
        return _double(p1) if s1 == s2 else None
    h, r = u2 - u1, s2 - s1
    h2 = h * h % P
    x3 = (r * r - h * h2 - 2 * u1 * h2) % P
    return x3, (r * (u1 * h2 - x3) - s1 * h * h2) % P, h * z1 * z2 % P


def _mul2(a, pa, b, pb):
    """Return a*pa + b*pb (Shamir's trick: one pass of doublings for both scalars), in affine (x, y) or None."""
    both, acc = _add(pa, pb), None
    for i in reversed(range(256)):
        acc = _double(acc)
        bits = (a >> i & 1, b >> i & 1)
        acc = _add(acc, {(1, 0): pa, (0, 1): pb, (1, 1): both}.get(bits))
    if acc is None:
        return None
    zinv = pow(acc[2], -1, P)
    return acc[0] * zinv * zinv % P, acc[1] * pow(zinv, 3, P) % P


def recover_address(digest: bytes, sig: bytes):
    """Return the lowercase 0x address whose key made the 65-byte r||s||v signature of digest, or raise ValueError."""
    r, s, v = int.from_bytes(sig[:32], "big"), int.from_bytes(sig[32:64], "big"), sig[64]
    if not 1 <= r < N or not 1 <= s < N:
        raise ValueError("its r or s is out of range")
    if v not in (27, 28):
        raise ValueError(f"its v is {v}, not 27 or 28")
    y2 = (pow(r, 3, P) + 7) % P
    y = pow(y2, (P + 1) // 4, P)
    if y * y % P != y2:
        raise ValueError("its r is not the x of a curve point")
    if y % 2 != v - 27:
        y = P - y
    e = int.from_bytes(digest, "big") % N
    rinv = pow(r, -1, N)
    q = _mul2(s * rinv % N, (r, y, 1), -e * rinv % N, G + (1,))  # Q = r^-1 (s R - e G)
    if q is None:
        raise ValueError("it recovers to no key")
    return "0x" + keccak256(q[0].to_bytes(32, "big") + q[1].to_bytes(32, "big"))[-20:].hex()


def personal_sign_digest(message: bytes) -> bytes:
    """Return the EIP-191 personal_sign digest of message."""
    return keccak256(b"\x19Ethereum Signed Message:\n" + str(len(message)).encode() + message)


def is_checksummed(address: str) -> bool:
    """Tell whether a 0x address of 40 hex digits carries a valid EIP-55 mixed-case checksum."""
    hexpart = address[2:]
    h = keccak256(hexpart.lower().encode()).hex()
    return all(c == (c.upper() if int(h[i], 16) >= 8 else c.lower()) for i, c in enumerate(hexpart))


# ---------------------------------------------------------------- the ledger
EVENTS = {"allowed", "held", "refused", "sent", "mined", "failed"}
HASH_RE = re.compile(r"0x[0-9a-fA-F]{64}\Z")
ADDR_RE = re.compile(r"0x[0-9a-fA-F]{40}\Z")
SIG_RE = re.compile(r"0x[0-9a-fA-F]{130}\Z")
DIGITS_RE = re.compile(r"[0-9]+\Z")
AT_RE = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z\Z")
ZERO = "0x" + "0" * 64


class Bad(Exception):
    """The first problem found in a ledger, as a sentence."""


def _int(v):
    """Tell whether v is a JSON integer (and not true/false)."""
    return isinstance(v, int) and not isinstance(v, bool)


def _no_duplicates(pairs):
    """Build a JSON object, refusing one that names a field twice (readers could disagree on its value)."""
    names = [name for name, _ in pairs]
    for name in names:
        if names.count(name) > 1:
            raise Bad(f"an object names the field \"{name}\" twice")
    return dict(pairs)


def _text(pattern=None):
    """A test that a value is a string (matching the regex pattern, if given)."""
    return lambda x: isinstance(x, str) and (pattern is None or bool(pattern.match(x)))


def _or_null(test):
    """A test that a value is null or passes test."""
    return lambda x: x is None or test(x)


HASH, ADDR = "a 0x hash of 64 hex digits", "a 0x address of 40 hex digits"
BODY_RULES = [  # field, test, what it must be (in the spec's order)
    ("v", lambda x: _int(x) and x == 1, "1"), ("seq", _int, "an integer"), ("prev", _text(HASH_RE), HASH),
    ("at", _text(AT_RE), "a UTC time like 2026-11-28T13:00:00.123456Z"), ("chain_id", _int, "an integer"),
    ("wallet", _text(ADDR_RE), ADDR), ("event", lambda x: x in EVENTS, "one of " + ", ".join(sorted(EVENTS))),
    ("tool", _text(), "a string"), ("amount", _or_null(_text(DIGITS_RE)), "null or a string of digits"),
    ("currency", _or_null(_text()), "null or a string"), ("counterparty", _or_null(_text(ADDR_RE)), "null or " + ADDR),
    ("rule", _or_null(_text()), "null or a string"), ("reason", _text(), "a string"),
    ("tx", _or_null(_text(HASH_RE)), "null or " + HASH), ("policy", _or_null(_text(HASH_RE)), "null or " + HASH)]
FIELDS = [name for name, _, _ in BODY_RULES]


def check_body(body):
    """Raise Bad unless body (a dict in file order) has exactly the spec's fields with the right types."""
    if list(body) != FIELDS:
        raise Bad(f"the body's fields are {', '.join(body) or 'none'}; "
                  f"expected exactly {', '.join(FIELDS)} in that order")
    for name, ok, want in BODY_RULES:
        if not ok(body[name]):
            raise Bad(f"the body's {name} is {json.dumps(body[name], ensure_ascii=False)}; it must be {want}")
    for name in ("wallet", "counterparty"):
        if body[name] is not None and not is_checksummed(body[name]):
            raise Bad(f"the body's {name} {body[name]} is not a valid EIP-55 checksummed address")


def _parse(text, what):
    """Parse JSON text (objects may not repeat a field), or raise Bad saying what (e.g. "the body") is wrong."""
    try:
        return json.loads(text, object_pairs_hook=_no_duplicates)
    except RecursionError:
        raise Bad(f"{what} is JSON nested too deeply") from None
    except ValueError as e:
        raise Bad(f"{what} is not valid JSON: {e.msg.removesuffix(' at')} at column {e.colno}") from None


def verify_line(k, text, prev_hash, first):
    """Check line k (text) against the previous hash and the first body; return (hash, body) or raise Bad."""
    entry = _parse(text, "the line")
    if not isinstance(entry, dict):
        raise Bad("the line is not a JSON object")
    for name in ("body", "hash", "signature"):
        if name not in entry:
            raise Bad(f"the field \"{name}\" is missing")
        if not isinstance(entry[name], str):
            raise Bad(f"the field \"{name}\" is not a string")
    extra = sorted(set(entry) - {"body", "hash", "signature"})
    if extra:
        raise Bad(f"unexpected field(s) {', '.join(extra)}; a line holds only body, hash and signature")
    if not HASH_RE.match(entry["hash"]):
        raise Bad("the hash is not 0x followed by 64 hex digits")
    if not SIG_RE.match(entry["signature"]):
        raise Bad(f"the signature is not 0x followed by 130 hex digits (65 bytes r, s, v); "
                  f"it has {len(entry['signature']) - 2} characters after 0x")
    digest = keccak256(entry["body"].encode("utf-8"))
    if digest.hex() != entry["hash"][2:].lower():
        raise Bad(f"the body does not match its hash (keccak256 of the body is 0x{digest.hex()}, "
                  f"the line says {entry['hash']})")
    body = _parse(entry["body"], "the body")
    if not isinstance(body, dict):
        raise Bad("the body is not a JSON object")
    check_body(body)
    if body["seq"] != k:
        raise Bad(f"seq is {body['seq']}, expected {k} (an entry is missing, repeated or out of order)")
    if body["prev"].lower() != prev_hash:
        raise Bad(f"prev is {body['prev']}, but the previous entry's hash is {prev_hash} (the chain is broken here)")
    if first is not None:
        for name in ("wallet", "chain_id"):
            if str(body[name]).lower() != str(first[name]).lower():
                raise Bad(f"the body's {name} is {body[name]}, but line 1's is {first[name]}")
    message = b"AgentPact wallet ledger entry 0x" + digest.hex().encode()
    try:
        signer = recover_address(personal_sign_digest(message), bytes.fromhex(entry["signature"][2:]))
    except ValueError as e:
        raise Bad(f"the signature is invalid: {e}") from None
    if signer != body["wallet"].lower():
        raise Bad(f"the signature is not by the wallet {body['wallet']} (it recovers to {signer})")
    return "0x" + digest.hex(), body


def verify(lines, wallet=None):
    """Verify the ledger's lines (str, or bytes of UTF-8); return the "ok: ..." summary or raise Bad "line K: ..."."""
    prev, first = ZERO, None
    if lines and not lines[-1]:
        lines = lines[:-1]  # the newline that ends the last line
    for k, text in enumerate(lines, 1):
        try:
            if isinstance(text, bytes):
                try:
                    text = text.decode("utf-8")
                except UnicodeDecodeError:
                    raise Bad("not valid UTF-8") from None
            if not text.strip():
                raise Bad("empty line (each line must be one JSON object)")
            prev, body = verify_line(k, text, prev, first)
            first = first or body
            if wallet and body["wallet"].lower() != wallet.lower():
                raise Bad(f"the ledger is of wallet {body['wallet']}, not {wallet}")
        except Bad as e:
            raise Bad(f"line {k}: {e}") from None
    if first is None:
        return "ok: 0 entries"
    return f"ok: {len(lines)} entries, wallet {first['wallet']}, head {prev}"


# ---------------------------------------------------------------- self-test
# Made with eth_account 0.14.0: Account.sign_message(encode_defunct(text=message), key) by Hardhat account #1.
SELF_TEST_LINE = r'''{"body": "{\"v\":1,\"seq\":1,\"prev\":\"0x0000000000000000000000000000000000000000000000000000000000000000\",\"at\":\"2026-11-28T13:00:01.123456Z\",\"chain_id\":84532,\"wallet\":\"0x70997970C51812dc3A010C7d01b50e0d17dc79C8\",\"event\":\"allowed\",\"tool\":\"create_pact\",\"amount\":\"1000\",\"currency\":\"ETH\",\"counterparty\":\"0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC\",\"rule\":null,\"reason\":\"Within every limit.\",\"tx\":null,\"policy\":\"0x5b0f9436c819b53dbee8ea2c97c9b239e65dc59bc3413d5d08ecbb88caf2b2db\"}", "hash": "0x576427b644f50acbba02d39c321a4687894826e3944d616ec7ce1e30fc66ad25", "signature": "0x59644428957306a637676e4e50216767f7916d106544d3426ab09aecc9ed5c425e099ab84fd525cf476d5b7a2086b021533374532c5c868ae67ac45ab679df121c"}'''
SELF_TEST_WALLET = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"
SELF_TEST_HEAD = "0x576427b644f50acbba02d39c321a4687894826e3944d616ec7ce1e30fc66ad25"


def _signer(line, extra=b"", flip_s=False):
    """Recover who signed a ledger line's message (+ extra); flip_s uses the twin s' = n - s, v' = 55 - v."""
    entry = json.loads(line)
    sig = bytes.fromhex(entry["signature"][2:])
    if flip_s:
        sig = sig[:32] + (N - int.from_bytes(sig[32:64], "big")).to_bytes(32, "big") + bytes([55 - sig[64]])
    message = b"AgentPact wallet ledger entry " + entry["hash"].encode() + extra
    return recover_address(personal_sign_digest(message), sig)


def _caught(lines, start):
    """Tell whether verifying lines fails with a message that starts with start."""
    try:
        verify(lines)
        return False
    except Bad as e:
        return str(e).startswith(start)


KNOWN_ANSWERS = [  # name, check
    ("keccak256 of empty",
     lambda: keccak256(b"").hex() == "c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470"),
    ("keccak256 of abc",
     lambda: keccak256(b"abc").hex() == "4e03657aea45a94fc7d47ba826c8d667c0d1e6e33a64a036ec44f58fa12d6c45"),
    ("keccak256 of 200 x 'a' (two blocks)",
     lambda: keccak256(b"a" * 200).hex() == "96ea54061def936c4be90b518992fdc6f12f535068a256229aca54267b4d084d"),
    ("EIP-55 good", lambda: is_checksummed("0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed")),
    ("EIP-55 bad", lambda: not is_checksummed("0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD")),
    ("recover the signer (v = 28)", lambda: _signer(SELF_TEST_LINE) == SELF_TEST_WALLET.lower()),
    ("recover the signer from the high-s twin (v = 27)",
     lambda: _signer(SELF_TEST_LINE, flip_s=True) == SELF_TEST_WALLET.lower()),
    ("another message recovers another key", lambda: _signer(SELF_TEST_LINE, b"!") != SELF_TEST_WALLET.lower()),
    ("verify a one-entry ledger", lambda: verify([SELF_TEST_LINE], SELF_TEST_WALLET)
     == f"ok: 1 entries, wallet {SELF_TEST_WALLET}, head {SELF_TEST_HEAD}"),
    ("a tampered amount is caught",
     lambda: _caught([SELF_TEST_LINE.replace("1000", "9000")], "line 1: the body does not match its hash")),
]


def self_test():
    """Run the built-in known-answer checks, print each result; return the number of failures."""
    failures = 0
    for name, check in KNOWN_ANSWERS:
        try:
            passed = check() is True
        except Exception as e:  # a broken implementation must fail the self-test, not crash it
            passed, name = False, f"{name} ({type(e).__name__}: {e})"
        print(("pass: " if passed else "FAIL: ") + name)
        failures += not passed
    return failures


def main():
    """Parse the command line, verify the ledger and print the verdict; return the exit code."""
    ap = argparse.ArgumentParser(description="Verify an AgentPact wallet ledger (JSON lines) offline.")
    ap.add_argument("file", nargs="?", help='the ledger file, or "-" for standard input')
    ap.add_argument("--wallet", help="the wallet the ledger must belong to (0x...)")
    ap.add_argument("--self-test", action="store_true", help="run built-in known-answer checks and exit")
    args = ap.parse_args()
    if args.self_test:
        return 1 if self_test() else 0
    if not args.file:
        ap.error("give the ledger file (or - for standard input), or --self-test")
    if args.wallet and not (ADDR_RE.match(args.wallet) and
                            (args.wallet == args.wallet.lower() or is_checksummed(args.wallet))):
        print(f"--wallet {args.wallet} is not a 0x address of 40 hex digits, all lowercase or EIP-55 checksummed")
        return 1
    try:
        if args.file == "-":
            data = sys.stdin.buffer.read()
        else:
            with open(args.file, "rb") as f:
                data = f.read()
    except OSError as e:
        print(f"cannot read {args.file}: {e.strerror}")
        return 1
    try:
        print(verify(data.split(b"\n"), args.wallet))
        return 0
    except Bad as e:
        print(e)
        return 1


if __name__ == "__main__":
    sys.exit(main())
