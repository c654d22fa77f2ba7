"""FarmHash Fingerprint64 (farmhashna::Hash64) in pure Python, the function behind BigQuery's
FARM_FINGERPRINT. Users split data with `MOD(ABS(FARM_FINGERPRINT(id)), 10) < 8`, so the local
result must be bit-for-bit BigQuery's or a pipeline trains on a different split locally."""

from __future__ import annotations

import struct

MASK = (1 << 64) - 1
K0 = 0xC3A5C85C97CB3127
K1 = 0xB492B66FBE98F273
K2 = 0x9AE16A3B2F90404F


def _fetch64(data: bytes, offset: int) -> int:
    return struct.unpack_from("<Q", data, offset)[0]


def _fetch32(data: bytes, offset: int) -> int:
    return struct.unpack_from("<I", data, offset)[0]


def _rotate(value: int, shift: int) -> int:
    return ((value >> shift) | (value << (64 - shift))) & MASK


def _shift_mix(value: int) -> int:
    return value ^ (value >> 47)


def _hash_len16(u: int, v: int, mul: int) -> int:
    a = ((u ^ v) * mul) & MASK
    a ^= a >> 47
    b = ((v ^ a) * mul) & MASK
    b ^= b >> 47
    return (b * mul) & MASK


def _hash_len0to16(data: bytes) -> int:
    length = len(data)
    if length >= 8:
        mul = K2 + length * 2
        a = (_fetch64(data, 0) + K2) & MASK
        b = _fetch64(data, length - 8)
        c = (_rotate(b, 37) * mul + a) & MASK
        d = ((_rotate(a, 25) + b) * mul) & MASK
        return _hash_len16(c, d, mul)
    if length >= 4:
        mul = K2 + length * 2
        a = _fetch32(data, 0)
        return _hash_len16((length + (a << 3)) & MASK, _fetch32(data, length - 4), mul)
    if length > 0:
        a, b, c = data[0], data[length >> 1], data[length - 1]
        y = (a + (b << 8)) & 0xFFFFFFFF
        z = (length + (c << 2)) & 0xFFFFFFFF
        return (_shift_mix(((y * K2) ^ (z * K0)) & MASK) * K2) & MASK
    return K2


def _hash_len17to32(data: bytes) -> int:
    length = len(data)
    mul = K2 + length * 2
    a = (_fetch64(data, 0) * K1) & MASK
    b = _fetch64(data, 8)
    c = (_fetch64(data, length - 8) * mul) & MASK
    d = (_fetch64(data, length - 16) * K2) & MASK
    return _hash_len16(
        (_rotate((a + b) & MASK, 43) + _rotate(c, 30) + d) & MASK,
        (a + _rotate((b + K2) & MASK, 18) + c) & MASK,
        mul,
    )


def _hash_len33to64(data: bytes) -> int:
    length = len(data)
    mul = K2 + length * 2
    a = (_fetch64(data, 0) * K2) & MASK
    b = _fetch64(data, 8)
    c = (_fetch64(data, length - 8) * mul) & MASK
    d = (_fetch64(data, length - 16) * K2) & MASK
    y = (_rotate((a + b) & MASK, 43) + _rotate(c, 30) + d) & MASK
    z = _hash_len16(y, (a + _rotate((b + K2) & MASK, 18) + c) & MASK, mul)
    e = (_fetch64(data, 16) * mul) & MASK
    f = _fetch64(data, 24)
    g = ((y + _fetch64(data, length - 32)) * mul) & MASK
    h = ((z + _fetch64(data, length - 24)) * mul) & MASK
    return _hash_len16(
        (_rotate((e + f) & MASK, 43) + _rotate(g, 30) + h) & MASK,
        (e + _rotate((f + a) & MASK, 18) + g) & MASK,
        mul,
    )


def _weak_hash_len32_with_seeds(data: bytes, offset: int, a: int, b: int) -> tuple[int, int]:
    w, x = _fetch64(data, offset), _fetch64(data, offset + 8)
    y, z = _fetch64(data, offset + 16), _fetch64(data, offset + 24)
    a = (a + w) & MASK
    b = _rotate((b + a + z) & MASK, 21)
    c = a
    a = (a + x + y) & MASK
    b = (b + _rotate(a, 44)) & MASK
    return (a + z) & MASK, (b + c) & MASK


def _hash_long(data: bytes) -> int:
    length = len(data)
    seed = 81
    y = (seed * K1 + 113) & MASK
    z = (_shift_mix((y * K2 + 113) & MASK) * K2) & MASK
    v0 = v1 = w0 = w1 = 0
    x = (seed * K2 + _fetch64(data, 0)) & MASK
    end = ((length - 1) // 64) * 64
    last64 = end + ((length - 1) & 63) - 63
    pos = 0
    while True:
        x = (_rotate((x + y + v0 + _fetch64(data, pos + 8)) & MASK, 37) * K1) & MASK
        y = (_rotate((y + v1 + _fetch64(data, pos + 48)) & MASK, 42) * K1) & MASK
        x ^= w1
        y = (y + v0 + _fetch64(data, pos + 40)) & MASK
        z = (_rotate((z + w0) & MASK, 33) * K1) & MASK
        v0, v1 = _weak_hash_len32_with_seeds(data, pos, (v1 * K1) & MASK, (x + w0) & MASK)
        w0, w1 = _weak_hash_len32_with_seeds(
            data, pos + 32, (z + w1) & MASK, (y + _fetch64(data, pos + 16)) & MASK
        )
        z, x = x, z
        pos += 64
        if pos == end:
            break
    mul = K1 + ((z & 0xFF) << 1)
    pos = last64
    w0 = (w0 + ((length - 1) & 63)) & MASK
    v0 = (v0 + w0) & MASK
    w0 = (w0 + v0) & MASK
    x = (_rotate((x + y + v0 + _fetch64(data, pos + 8)) & MASK, 37) * mul) & MASK
    y = (_rotate((y + v1 + _fetch64(data, pos + 48)) & MASK, 42) * mul) & MASK
    x ^= (w1 * 9) & MASK
    y = (y + v0 * 9 + _fetch64(data, pos + 40)) & MASK
    z = (_rotate((z + w0) & MASK, 33) * mul) & MASK
    v0, v1 = _weak_hash_len32_with_seeds(data, pos, (v1 * mul) & MASK, (x + w0) & MASK)
    w0, w1 = _weak_hash_len32_with_seeds(
        data, pos + 32, (z + w1) & MASK, (y + _fetch64(data, pos + 16)) & MASK
    )
    z, x = x, z
    return _hash_len16(
        (_hash_len16(v0, w0, mul) + _shift_mix(y) * K0 + z) & MASK,
        (_hash_len16(v1, w1, mul) + x) & MASK,
        mul,
    )


def fingerprint64(data: bytes) -> int:
    """FarmHash Fingerprint64 of `data` as an unsigned 64-bit integer."""
    length = len(data)
    if length <= 16:
        return _hash_len0to16(data)
    if length <= 32:
        return _hash_len17to32(data)
    if length <= 64:
        return _hash_len33to64(data)
    return _hash_long(data)


def farm_fingerprint(value: str | bytes) -> int:
    """BigQuery's FARM_FINGERPRINT: Fingerprint64 of the UTF-8 bytes as a signed INT64."""
    data = value.encode("utf-8") if isinstance(value, str) else value
    unsigned = fingerprint64(data)
    return unsigned - (1 << 64) if unsigned >= 1 << 63 else unsigned
