"""GoogleSQL functions written in Python and registered on DuckDB as `bq_*` UDFs: those whose
rules (Unicode normalization, RFC 4648 base32, IP addresses, URL hosts and the public-suffix
list) have no DuckDB built-in of the same meaning. googlesql.py rewrites the GoogleSQL calls to
them; user SQL cannot name `bq_*` itself (functions.py's allow-list).

A UDF raises ValueError for a value BigQuery rejects; jobs.py strips DuckDB's "Python exception
occurred ..." wrapper so the client sees the message alone. NULL in gives NULL out, as every
function here does in BigQuery; a function may also answer NULL itself.
"""

from __future__ import annotations

import base64
import functools
import ipaddress
import json
import re
import unicodedata
from collections.abc import Callable
from typing import Any

import duckdb

NORMALIZATION_MODES = ("NFC", "NFKC", "NFD", "NFKD")


# -- string functions (https://cloud.google.com/bigquery/docs/reference/standard-sql/string_functions)
def normalize(value: str, mode: str) -> str:
    return unicodedata.normalize(mode, value)


def normalize_and_casefold(value: str, mode: str) -> str:
    # Full Unicode case folding (str.casefold), then the normal form: folding can produce
    # characters that are not in the requested form.
    return unicodedata.normalize(mode, unicodedata.normalize(mode, value).casefold())


def initcap(value: str, delimiters: str) -> str:
    """Each word's first character upper-cased and the rest lower-cased; a word is a run of
    characters that are not in `delimiters`, which stay as they are (no delimiters: the whole
    value is one word). A character whose case mapping is several characters is kept."""
    separators = set(delimiters)
    out = []
    starts_word = True
    for character in value:
        if character in separators:
            out.append(character)
            starts_word = True
            continue
        mapped = character.upper() if starts_word else character.lower()
        out.append(mapped if len(mapped) == 1 else character)
        starts_word = False
    return "".join(out)


def to_base32(value: bytes) -> str:
    return base64.b32encode(value).decode()


def from_base32(value: str) -> bytes:
    try:
        return base64.b32decode(value)
    except ValueError as error:  # binascii.Error is a ValueError
        raise ValueError(f"Failed to decode invalid base32 string: {value!r}") from error


# -- NET functions (https://cloud.google.com/bigquery/docs/reference/standard-sql/net_functions)
def ip_from_string(text: str) -> bytes:
    address = _ip_address(text)
    if address is None:
        raise ValueError(f"Unparseable IP address: {text}")
    return address.packed


def safe_ip_from_string(text: str) -> bytes | None:
    address = _ip_address(text)
    return address.packed if address is not None else None


def _ip_address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    # BigQuery takes dotted-quad IPv4 or RFC 4291 IPv6, no CIDR suffix and no zone index.
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def ip_to_string(packed: bytes) -> str:
    if len(packed) == 4:
        return str(ipaddress.IPv4Address(packed))
    if len(packed) != 16:
        raise ValueError(f"IP_TO_STRING: the input must be 4 or 16 bytes, got {len(packed)}")
    address = ipaddress.IPv6Address(packed)
    if address.ipv4_mapped is not None:  # BigQuery writes the IPv4 part dotted: ::ffff:1.2.3.4
        return f"::ffff:{address.ipv4_mapped}"
    return str(address)


def ip_net_mask(num_bytes: int, prefix_length: int) -> bytes:
    if num_bytes not in (4, 16):
        raise ValueError(f"IP_NET_MASK: the number of output bytes must be 4 or 16: {num_bytes}")
    if not 0 <= prefix_length <= num_bytes * 8:
        raise ValueError(f"IP_NET_MASK: prefix length out of range: {prefix_length}")
    bits = num_bytes * 8
    return (((1 << prefix_length) - 1) << (bits - prefix_length)).to_bytes(num_bytes, "big")


def ip_trunc(packed: bytes, prefix_length: int) -> bytes:
    if len(packed) not in (4, 16):
        raise ValueError(f"IP_TRUNC: the input must be 4 or 16 bytes, got {len(packed)}")
    mask = int.from_bytes(ip_net_mask(len(packed), prefix_length), "big")
    return (int.from_bytes(packed, "big") & mask).to_bytes(len(packed), "big")


def ipv4_from_int64(value: int) -> bytes:
    # -0x80000000..-1 are the two's complement of 0x80000000..0xFFFFFFFF, as BigQuery reads them.
    if not -(1 << 31) <= value <= (1 << 32) - 1:
        raise ValueError(f"IPV4_FROM_INT64: value out of range: {value}")
    return (value & 0xFFFFFFFF).to_bytes(4, "big")


def ipv4_to_int64(packed: bytes) -> int:
    if len(packed) != 4:
        raise ValueError(f"IPV4_TO_INT64: the input must be 4 bytes, got {len(packed)}")
    return int.from_bytes(packed, "big")


SCHEME = re.compile(r"^(?:[A-Za-z][A-Za-z0-9+.\-]*:)?//")


def host(url: str) -> str | None:
    """The host of a URL, best effort as BigQuery's NET.HOST: surrounding spaces and the scheme
    (or a relative `//`) dropped, then user info, port, path, query and fragment."""
    rest = SCHEME.sub("", url.strip(), count=1)
    rest = re.split(r"[/?#]", rest, maxsplit=1)[0]
    rest = rest.rsplit("@", 1)[-1]
    if rest.startswith("["):  # an IPv6 literal keeps its brackets
        end = rest.find("]")
        found = rest[: end + 1] if end >= 0 else rest
    else:
        found = rest.split(":", 1)[0]
    return found or None


@functools.cache
def _public_suffix_list() -> Any:
    # The ICANN section of the Public Suffix List as shipped inside the `publicsuffixlist`
    # package (no download): BigQuery ignores the list's private domains and its default `*`
    # rule (a host whose suffix is not listed has none).
    from publicsuffixlist import PublicSuffixList

    return PublicSuffixList(only_icann=True, accept_unknown=False)


def _suffix_labels(url: str, extra: int) -> str | None:
    """The last labels of the URL's host: its public suffix plus `extra` more labels, written
    as in the host; NULL when the host has no listed suffix or no more labels."""
    name = host(url)
    if name is None or name.startswith("["):
        return None
    labels = name.split(".")
    if not all(labels):
        return None
    try:  # looked up lower-cased and in Punycode; answered in the host's own spelling
        ascii_labels = [label.lower().encode("idna").decode() for label in labels]
    except UnicodeError:
        return None
    suffix = _public_suffix_list().publicsuffix(".".join(ascii_labels))
    if suffix is None:
        return None
    count = suffix.count(".") + 1 + extra
    return ".".join(labels[-count:]) if count <= len(labels) else None


def public_suffix(url: str) -> str | None:
    return _suffix_labels(url, 0)


def reg_domain(url: str) -> str | None:
    return _suffix_labels(url, 1)


# -- HLL_COUNT (https://cloud.google.com/bigquery/docs/reference/standard-sql/hll_functions) ----
# BigQuery's sketches are opaque HLL++ bytes. The local ones are exact: the sorted distinct
# values (as DuckDB's JSON of each) after a header naming the input type, so every count is
# exact where BigQuery's is an estimate within HLL++'s documented error, and a local sketch is
# never mistaken for one of BigQuery's (nor is one of BigQuery's read here).
SKETCH_HEADER = b"vertexkit-exact-set-sketch-v1\n"
SKETCH_TYPES = {
    "BIGINT[]": "INT64",
    "INTEGER[]": "INT64",  # an INT64 literal is INTEGER in DuckDB
    "VARCHAR[]": "STRING",
    "BLOB[]": "BYTES",
}


def hll_init(values_json: str, kind: str, precision: int) -> bytes | None:
    """A sketch of the values (already distinct and sorted); NULL for no values."""
    if not 10 <= precision <= 24:
        raise ValueError(f"HLL_COUNT.INIT: precision must be between 10 and 24: {precision}")
    input_type = SKETCH_TYPES.get(kind) or ("NUMERIC" if kind.startswith("DECIMAL") else None)
    if input_type is None:
        raise ValueError(
            "No matching signature for aggregate function HLL_COUNT.INIT: the input must be"
            " INT64, NUMERIC, BIGNUMERIC, STRING or BYTES"
        )
    values = json.loads(values_json)
    if not values:
        return None
    return SKETCH_HEADER + json.dumps([input_type, values], separators=(",", ":")).encode()


def _sketch_set(sketch: bytes) -> tuple[str, set[str]]:
    if not sketch.startswith(SKETCH_HEADER):
        raise ValueError("HLL_COUNT: the input is not a sketch built by HLL_COUNT.INIT")
    input_type, values = json.loads(sketch[len(SKETCH_HEADER) :])
    return input_type, {json.dumps(value) for value in values}


def _union(sketches: list[bytes | None]) -> tuple[str | None, set[str]]:
    kinds, union = set(), set()
    for sketch in sketches:
        if sketch is not None:
            kind, values = _sketch_set(sketch)
            kinds.add(kind)
            union |= values
    if len(kinds) > 1:
        raise ValueError(f"HLL_COUNT: sketches of different input types: {sorted(kinds)}")
    return (kinds.pop() if kinds else None), union


def hll_merge(sketches: list[bytes | None]) -> int:
    return len(_union(sketches)[1])  # no sketches (or only NULLs): 0


def hll_merge_partial(sketches: list[bytes | None]) -> bytes | None:
    kind, union = _union(sketches)
    if kind is None:
        return None
    values = sorted((json.loads(v) for v in union), key=json.dumps)
    return SKETCH_HEADER + json.dumps([kind, values], separators=(",", ":")).encode()


def hll_extract(sketch: bytes) -> int:
    return len(_sketch_set(sketch)[1])


# -- registration ----------------------------------------------------------------------------------
UDF = tuple[str, Callable[..., Any], list[str], str]
UDFS: list[UDF] = [
    ("bq_normalize", normalize, ["VARCHAR", "VARCHAR"], "VARCHAR"),
    ("bq_normalize_and_casefold", normalize_and_casefold, ["VARCHAR", "VARCHAR"], "VARCHAR"),
    ("bq_initcap", initcap, ["VARCHAR", "VARCHAR"], "VARCHAR"),
    ("bq_to_base32", to_base32, ["BLOB"], "VARCHAR"),
    ("bq_from_base32", from_base32, ["VARCHAR"], "BLOB"),
    ("bq_net_ip_from_string", ip_from_string, ["VARCHAR"], "BLOB"),
    ("bq_net_safe_ip_from_string", safe_ip_from_string, ["VARCHAR"], "BLOB"),
    ("bq_net_ip_to_string", ip_to_string, ["BLOB"], "VARCHAR"),
    ("bq_net_ip_net_mask", ip_net_mask, ["BIGINT", "BIGINT"], "BLOB"),
    ("bq_net_ip_trunc", ip_trunc, ["BLOB", "BIGINT"], "BLOB"),
    ("bq_net_ipv4_from_int64", ipv4_from_int64, ["BIGINT"], "BLOB"),
    ("bq_net_ipv4_to_int64", ipv4_to_int64, ["BLOB"], "BIGINT"),
    ("bq_net_host", host, ["VARCHAR"], "VARCHAR"),
    ("bq_net_public_suffix", public_suffix, ["VARCHAR"], "VARCHAR"),
    ("bq_net_reg_domain", reg_domain, ["VARCHAR"], "VARCHAR"),
    ("bq_hll_init", hll_init, ["VARCHAR", "VARCHAR", "BIGINT"], "BLOB"),
    ("bq_hll_merge", hll_merge, ["BLOB[]"], "BIGINT"),
    ("bq_hll_merge_partial", hll_merge_partial, ["BLOB[]"], "BLOB"),
    ("bq_hll_extract", hll_extract, ["BLOB"], "BIGINT"),
]


def install(connection: duckdb.DuckDBPyConnection, udfs: list[UDF]) -> None:
    for name, function, arguments, result in udfs:
        connection.create_function(
            name,
            _null_in_null_out(function),
            [duckdb.sqltype(t) for t in arguments],
            duckdb.sqltype(result),
            null_handling="special",  # DuckDB's default refuses a UDF that answers NULL
            side_effects=False,
        )


def _null_in_null_out(function: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(function)
    def wrapper(*arguments: Any) -> Any:
        return None if any(a is None for a in arguments) else function(*arguments)

    return wrapper
