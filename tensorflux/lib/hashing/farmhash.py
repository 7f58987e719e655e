"""FarmHash Fingerprint64 and TensorFlow's `FingerprintCat64`, in pure Python.

TensorFlow assigns hash buckets (`StringToHashBucketFast`, `SparseCross` with hashed output,
hence `categorical_column_with_hash_bucket` and `crossed_column`) with FarmHash's 64-bit
fingerprint (the `farmhashna` variant, seed-free), and combines fingerprints of the features of
a cross with `FingerprintCat64`. Both are reproduced here from the published algorithm, so
bucket ids (and embeddings trained on them) line up with TensorFlow's.

All arithmetic is on Python ints reduced modulo 2**64 (`_M`), the C++ `uint64_t` wrap-around.
"""

from __future__ import annotations

import struct

import numpy as np

__all__ = ["fingerprint64", "fingerprint64_array", "fingerprint_cat64"]

_M = (1 << 64) - 1
_K0 = 0xC3A5C85C97CB3127
_K1 = 0xB492B66FBE98F273
_K2 = 0x9AE16A3B2F90404F
_KMUL = 0xC6A4A7935BD1E995  # FingerprintCat64's multiplier

_U64 = struct.Struct("<Q").unpack_from
_U32 = struct.Struct("<I").unpack_from


def _fetch64(s: bytes, i: int) -> int:
    return _U64(s, i)[0]


def _fetch32(s: bytes, i: int) -> int:
    return _U32(s, i)[0]


def _rot(v: int, shift: int) -> int:
    """Right rotation of a 64-bit value (shift in 1..63)."""
    return ((v >> shift) | (v << (64 - shift))) & _M


def _shift_mix(v: int) -> int:
    return v ^ (v >> 47)


def _hash_len16(u: int, v: int, mul: int) -> int:
    a = ((u ^ v) * mul) & _M
    a ^= a >> 47
    b = ((v ^ a) * mul) & _M
    b ^= b >> 47
    return (b * mul) & _M


def _len_0_to_16(s: bytes, n: int) -> int:
    if n >= 8:
        mul = _K2 + n * 2
        a = (_fetch64(s, 0) + _K2) & _M
        b = _fetch64(s, n - 8)
        c = (_rot(b, 37) * mul + a) & _M
        d = ((_rot(a, 25) + b) * mul) & _M
        return _hash_len16(c, d, mul)
    if n >= 4:
        mul = _K2 + n * 2
        a = _fetch32(s, 0)
        return _hash_len16((n + (a << 3)) & _M, _fetch32(s, n - 4), mul)
    if n > 0:
        y = (s[0] + (s[n >> 1] << 8)) & 0xFFFFFFFF
        z = (n + (s[n - 1] << 2)) & 0xFFFFFFFF
        return (_shift_mix(((y * _K2) ^ (z * _K0)) & _M) * _K2) & _M
    return _K2


def _len_17_to_32(s: bytes, n: int) -> int:
    mul = _K2 + n * 2
    a = (_fetch64(s, 0) * _K1) & _M
    b = _fetch64(s, 8)
    c = (_fetch64(s, n - 8) * mul) & _M
    d = (_fetch64(s, n - 16) * _K2) & _M
    return _hash_len16((_rot((a + b) & _M, 43) + _rot(c, 30) + d) & _M,
                       (a + _rot((b + _K2) & _M, 18) + c) & _M, mul)


def _len_33_to_64(s: bytes, n: int) -> int:
    mul = _K2 + n * 2
    a = (_fetch64(s, 0) * _K2) & _M
    b = _fetch64(s, 8)
    c = (_fetch64(s, n - 8) * mul) & _M
    d = (_fetch64(s, n - 16) * _K2) & _M
    y = (_rot((a + b) & _M, 43) + _rot(c, 30) + d) & _M
    z = _hash_len16(y, (a + _rot((b + _K2) & _M, 18) + c) & _M, mul)
    e = (_fetch64(s, 16) * mul) & _M
    f = _fetch64(s, 24)
    g = ((y + _fetch64(s, n - 32)) * mul) & _M
    h = ((z + _fetch64(s, n - 24)) * mul) & _M
    return _hash_len16((_rot((e + f) & _M, 43) + _rot(g, 30) + h) & _M,
                       (e + _rot((f + a) & _M, 18) + g) & _M, mul)


def _weak_len32(s: bytes, i: int, a: int, b: int) -> tuple:
    w, x, y, z = _fetch64(s, i), _fetch64(s, i + 8), _fetch64(s, i + 16), _fetch64(s, i + 24)
    a = (a + w) & _M
    b = _rot((b + a + z) & _M, 21)
    c = a
    a = (a + x + y) & _M
    b = (b + _rot(a, 44)) & _M
    return (a + z) & _M, (b + c) & _M


def fingerprint64(data) -> int:
    """FarmHash's 64-bit fingerprint of `data` (TensorFlow's `Fingerprint64`), an unsigned int;
    text is hashed as its UTF-8 bytes."""
    s = data.encode("utf-8") if isinstance(data, str) else bytes(data)
    n = len(s)
    if n <= 16:
        return _len_0_to_16(s, n)
    if n <= 32:
        return _len_17_to_32(s, n)
    if n <= 64:
        return _len_33_to_64(s, n)
    seed = 81
    x = seed
    y = (seed * _K1 + 113) & _M
    z = (_shift_mix((y * _K2 + 113) & _M) * _K2) & _M
    v0 = v1 = w0 = w1 = 0
    x = (x * _K2 + _fetch64(s, 0)) & _M
    end = ((n - 1) // 64) * 64
    last64 = end + ((n - 1) & 63) - 63
    i = 0
    while True:
        x = (_rot((x + y + v0 + _fetch64(s, i + 8)) & _M, 37) * _K1) & _M
        y = (_rot((y + v1 + _fetch64(s, i + 48)) & _M, 42) * _K1) & _M
        x ^= w1
        y = (y + v0 + _fetch64(s, i + 40)) & _M
        z = (_rot((z + w0) & _M, 33) * _K1) & _M
        v0, v1 = _weak_len32(s, i, (v1 * _K1) & _M, (x + w0) & _M)
        w0, w1 = _weak_len32(s, i + 32, (z + w1) & _M, (y + _fetch64(s, i + 16)) & _M)
        z, x = x, z
        i += 64
        if i == end:
            break
    mul = _K1 + ((z & 0xFF) << 1)
    i = last64
    w0 = (w0 + ((n - 1) & 63)) & _M
    v0 = (v0 + w0) & _M
    w0 = (w0 + v0) & _M
    x = (_rot((x + y + v0 + _fetch64(s, i + 8)) & _M, 37) * mul) & _M
    y = (_rot((y + v1 + _fetch64(s, i + 48)) & _M, 42) * mul) & _M
    x ^= (w1 * 9) & _M
    y = (y + v0 * 9 + _fetch64(s, i + 40)) & _M
    z = (_rot((z + w0) & _M, 33) * mul) & _M
    v0, v1 = _weak_len32(s, i, (v1 * mul) & _M, (x + w0) & _M)
    w0, w1 = _weak_len32(s, i + 32, (z + w1) & _M, (y + _fetch64(s, i + 16)) & _M)
    z, x = x, z
    return _hash_len16((_hash_len16(v0, w0, mul) + _shift_mix(y) * _K0 + z) & _M,
                       (_hash_len16(v1, w1, mul) + x) & _M, mul)


def fingerprint_cat64(fp1: int, fp2: int) -> int:
    """TensorFlow's `FingerprintCat64`: combines two 64-bit fingerprints (order matters)."""
    result = fp1 ^ _KMUL
    result ^= (_shift_mix((fp2 * _KMUL) & _M) * _KMUL) & _M
    result = (result * _KMUL) & _M
    result = (_shift_mix(result) * _KMUL) & _M
    return _shift_mix(result)


# -- vectorised over many strings ------------------------------------------------------------
# Strings of one length share every branch of the algorithm, so each length group is hashed
# with NumPy uint64 arithmetic (wrapping like C++); strings over 64 bytes use the scalar loop.

_NK0, _NK1, _NK2 = np.uint64(_K0), np.uint64(_K1), np.uint64(_K2)


def _vrot(v, shift: int):
    return (v >> np.uint64(shift)) | (v << np.uint64(64 - shift))


def _vmix(v):
    return v ^ (v >> np.uint64(47))


def _vlen16(u, v, mul):
    a = _vmix((u ^ v) * mul)
    b = _vmix((v ^ a) * mul)
    return b * mul


def _vfetch64(rows, i: int):
    return np.ascontiguousarray(rows[:, i:i + 8]).view("<u8")[:, 0].astype(np.uint64)


def _vfetch32(rows, i: int):
    return np.ascontiguousarray(rows[:, i:i + 4]).view("<u4")[:, 0].astype(np.uint64)


def _vgroup(rows, n: int):
    """Fingerprints of the equal-length (n <= 64) byte rows `rows` ([m, n] uint8)."""
    m = rows.shape[0]
    mul = np.uint64(_K2 + n * 2)
    if n == 0:
        return np.full(m, _NK2, np.uint64)
    if n < 4:
        a, b, c = (rows[:, k].astype(np.uint64) for k in (0, n >> 1, n - 1))
        y = (a + (b << np.uint64(8))) & np.uint64(0xFFFFFFFF)
        z = (np.uint64(n) + (c << np.uint64(2))) & np.uint64(0xFFFFFFFF)
        return _vmix((y * _NK2) ^ (z * _NK0)) * _NK2
    if n < 8:
        a = _vfetch32(rows, 0)
        return _vlen16(np.uint64(n) + (a << np.uint64(3)), _vfetch32(rows, n - 4), mul)
    if n <= 16:
        a = _vfetch64(rows, 0) + _NK2
        b = _vfetch64(rows, n - 8)
        c = _vrot(b, 37) * mul + a
        d = (_vrot(a, 25) + b) * mul
        return _vlen16(c, d, mul)
    if n <= 32:
        a = _vfetch64(rows, 0) * _NK1
        b = _vfetch64(rows, 8)
        c = _vfetch64(rows, n - 8) * mul
        d = _vfetch64(rows, n - 16) * _NK2
        return _vlen16(_vrot(a + b, 43) + _vrot(c, 30) + d, a + _vrot(b + _NK2, 18) + c, mul)
    a = _vfetch64(rows, 0) * _NK2
    b = _vfetch64(rows, 8)
    c = _vfetch64(rows, n - 8) * mul
    d = _vfetch64(rows, n - 16) * _NK2
    y = _vrot(a + b, 43) + _vrot(c, 30) + d
    z = _vlen16(y, a + _vrot(b + _NK2, 18) + c, mul)
    e = _vfetch64(rows, 16) * mul
    f = _vfetch64(rows, 24)
    g = (y + _vfetch64(rows, n - 32)) * mul
    h = (z + _vfetch64(rows, n - 24)) * mul
    return _vlen16(_vrot(e + f, 43) + _vrot(g, 30) + h, e + _vrot(f + a, 18) + g, mul)


def fingerprint64_array(strings) -> np.ndarray:
    """`fingerprint64` of every item of `strings` (bytes), as a flat uint64 array."""
    items = [bytes(s) for s in strings]
    out = np.empty(len(items), np.uint64)
    lengths = np.fromiter(map(len, items), np.int64, len(items))
    with np.errstate(over="ignore"):
        for n in np.unique(lengths):
            where = np.flatnonzero(lengths == n)
            if n > 64:
                out[where] = [fingerprint64(items[i]) for i in where]
                continue
            joined = b"".join(items[i] for i in where)
            rows = np.frombuffer(joined, np.uint8).reshape(len(where), int(n))
            out[where] = _vgroup(rows, int(n))
    return out
