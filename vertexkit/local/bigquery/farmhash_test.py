"""FARM_FINGERPRINT against published values: BigQuery's documentation and FarmHash's own test
vectors (Fingerprint64 = farmhashna::Hash64), covering every length branch."""

from __future__ import annotations

import pytest

from vertexkit.local.bigquery.farmhash import farm_fingerprint, fingerprint64

LOREM = (
    "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt "
    "ut labore et dolore magna aliqua. Ut enim ad minim veniam, quis nostrud exercitation "
    "ullamco laboris nisi ut aliquip ex ea commodo consequat. Duis aute irure dolor in "
    "reprehenderit in voluptate velit esse cillum dolore eu fugiat nulla pariatur. Excepteur "
    "sint occaecat cupidatat non proident, sunt in culpa qui officia deserunt mollit anim id est "
    "laborum."
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", -7286425919675154353),  # BigQuery
        ("1footrue", -1541654101129638711),  # BigQuery docs example
        ("2applefalse", 2794438866806483259),
        ("3true", -4880158226897771312),
        ("alphabet", -2427165924636348523),
    ],
)
def test_bigquery_documented_values(text: str, expected: int) -> None:
    assert farm_fingerprint(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a", 0xB3454265B6DF75E3),  # 1..3 bytes
        ("abcd", 0x1A5502DE4A1F8101),  # 4..7
        ("abcdefgh", 0xFEE9D22990C82909),  # 8..16
        ("Nepal premier won't resign.", 0x8EB3808D1CCFC779),  # 17..32
        ("Discard medicine more than two years old.", 0xE8F89AB6DF9BDD25),  # 33..64
        ("For every action there is an equal and opposite government program.", 0x55182F8859ECA4CE),
        (LOREM, 0xC3F02C4FFD5D71E6),  # several 64-byte blocks
    ],
)
def test_farmhash_reference_vectors(text: str, expected: int) -> None:
    assert fingerprint64(text.encode()) == expected


def test_bytes_and_utf8_agree() -> None:
    assert farm_fingerprint("é") == farm_fingerprint("é".encode())
