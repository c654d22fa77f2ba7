"""GoogleSQL format elements (FORMAT_DATE/DATETIME/TIME/TIMESTAMP, PARSE_*) on DuckDB's strftime
and strptime. sqlglot has already rewritten a few BigQuery elements into Python's form when it
parsed the call (`%e` -> `%-d`, `%E6S` -> `%S.%f`, `%F` -> `%Y-%m-%d`, ...); each element is
translated on its own, and one with no faithful DuckDB form is refused by name.
"""

from __future__ import annotations

import re

import sqlglot
from sqlglot import exp

from vertexkit.local.bigquery.query_error import not_supported

ELEMENT = re.compile(r"%(E[0-9*]S|E4Y|Ez|-d|.)", re.DOTALL)
# Elements DuckDB's strftime writes exactly as BigQuery does.
SAME = set("AaBbdHIjMmpSUuVWwYyG")
ALIASES = {
    "h": "%b",
    "D": "%m/%d/%y",
    "x": "%m/%d/%y",
    "F": "%Y-%m-%d",
    "R": "%H:%M",
    "T": "%H:%M:%S",
    "X": "%H:%M:%S",
    "c": "%a %b %e %H:%M:%S %Y",
}
LITERALS = {"%": "%", "n": "\n", "t": "\t"}
# Elements with no strftime equivalent, as DuckDB SQL on the value `{x}`.
SPECIAL = {
    "-d": "lpad(CAST(day({x}) AS VARCHAR), 2, ' ')",  # %e
    "e": "lpad(CAST(day({x}) AS VARCHAR), 2, ' ')",
    "k": "lpad(CAST(hour({x}) AS VARCHAR), 2, ' ')",
    "l": "lpad(CAST((hour({x}) + 11) % 12 + 1 AS VARCHAR), 2, ' ')",
    "P": "lower(bq_strftime({x}, '%p'))",
    "Q": "CAST(quarter({x}) AS VARCHAR)",
    "C": "lpad(CAST(year({x}) // 100 AS VARCHAR), 2, '0')",
    "E4Y": "lpad(CAST(year({x}) AS VARCHAR), 4, '0')",
    "f": "lpad(CAST(microsecond({x}) % 1000000 AS VARCHAR), 6, '0')",  # from %E6S
    "g": "right(bq_strftime({x}, '%G'), 2)",
}
# Time-zone elements: only for a TIMESTAMP shown in UTC.
UTC_ONLY = {"Z": "'UTC'", "z": "'+0000'", "Ez": "'+00:00'"}
FRACTION = re.compile(r"E([1-6])S")

VALUE_KINDS = {
    exp.TsOrDsToDate: "DATE",
    exp.TsOrDsToDatetime: "DATETIME",
    exp.TsOrDsToTimestamp: "TIMESTAMP",
    exp.TsOrDsToTime: "TIME",
}


def _fill(template: str, value: exp.Expression) -> str:
    return template.replace("{x}", value.sql(dialect="duckdb"))


def _pieces(fmt: str, value: exp.Expression, utc: bool, what: str) -> list[str]:
    """The format as DuckDB SQL pieces to concatenate."""
    pieces: list[str] = []
    pending = ""  # strftime text not yet written

    def flush() -> None:
        nonlocal pending
        if pending:
            pieces.append(f"bq_strftime({value.sql(dialect='duckdb')}, {_quote(pending)})")
            pending = ""

    position = 0
    for match in ELEMENT.finditer(fmt):
        pending += fmt[position : match.start()].replace("%", "%%")
        position = match.end()
        element = match.group(1)
        if element in SAME:
            pending += "%" + element
        elif element in ALIASES:
            expanded = ALIASES[element]
            if "%e" in expanded:
                head, tail = expanded.split("%e")
                pending += head
                flush()
                pieces.append(_fill(SPECIAL["e"], value))
                pending += tail
            else:
                pending += expanded
        elif element in LITERALS:
            pending += LITERALS[element].replace("%", "%%")
        elif element in SPECIAL or element in UTC_ONLY or FRACTION.fullmatch(element):
            flush()
            pieces.append(_special(element, value, utc, what))
        else:
            raise not_supported(f"format element %{element} in {what}")
    pending += fmt[position:].replace("%", "%%")
    flush()
    return pieces


def _special(element: str, value: exp.Expression, utc: bool, what: str) -> str:
    if element in UTC_ONLY:
        if not utc:
            raise not_supported(f"format element %{element} in {what} (or with a time zone)")
        return UTC_ONLY[element]
    fraction = FRACTION.fullmatch(element)
    if fraction:
        digits = int(fraction.group(1))
        micros = "lpad(CAST(microsecond({x}) % 1000000 AS VARCHAR), 6, '0')"
        return _fill(f"bq_strftime({{x}}, '%S') || '.' || left({micros}, {digits})", value)
    return _fill(SPECIAL[element], value)


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _zone(node: exp.Expression | None, what: str) -> str:
    if node is None:
        return "UTC"
    if not isinstance(node, exp.Literal) or not node.is_string:
        raise not_supported(f"{what} with a time zone that is not a string literal")
    if not re.fullmatch(r"[A-Za-z_]+(?:/[A-Za-z_+-]+)*", node.this):
        raise not_supported(f"{what} with the time zone {node.this!r} (use a zone name)")
    return node.this


def _format_string(node: exp.Expression | None, what: str) -> str:
    if not isinstance(node, exp.Literal) or not node.is_string:
        raise not_supported(f"{what} with a format that is not a string literal")
    return node.this


def format_call(node: exp.TimeToStr) -> exp.Expression:
    """FORMAT_DATE / FORMAT_DATETIME / FORMAT_TIME / FORMAT_TIMESTAMP."""
    wrapper = node.this
    kind = VALUE_KINDS.get(type(wrapper))
    if kind is None:
        raise not_supported("this FORMAT_* call")
    what = f"FORMAT_{kind}"
    fmt = _format_string(node.args.get("format"), what)
    zone = _zone(node.args.get("zone"), what)
    inner = wrapper.this
    value = {
        "DATE": "CAST({x} AS DATE)",
        "DATETIME": "CAST({x} AS TIMESTAMP)",
        "TIME": "(DATE '1970-01-01' + CAST({x} AS TIME))",
        "TIMESTAMP": f"bq_timezone({_quote(zone)}, CAST({{x}} AS TIMESTAMPTZ))",
    }[kind]
    local = sqlglot.parse_one(_fill(value, inner), read="duckdb")
    # %Z, %z, %Ez: only a TIMESTAMP has a zone (and only UTC's is written here).
    pieces = _pieces(fmt, local, kind == "TIMESTAMP" and zone == "UTC", what)
    return sqlglot.parse_one("(" + " || ".join(pieces or ["''"]) + ")", read="duckdb")


# Elements DuckDB's strptime reads as BigQuery's PARSE_* do.
PARSE_SAME = set("YmdHMSybBaAjpI")
YEAR_ELEMENTS = {"Y", "y", "G", "F", "D", "x", "c"}
PARSE_KINDS = {
    exp.StrToTime: "TIMESTAMP",
    exp.StrToDate: "DATE",
    exp.ParseDatetime: "DATETIME",
    exp.ParseTime: "TIME",
}


def _parse_format(fmt: str, what: str) -> tuple[str, bool, bool]:
    """(DuckDB strptime format, has a year, has an offset)."""
    out = ""
    position = 0
    has_year = has_offset = False
    for match in ELEMENT.finditer(fmt):
        out += fmt[position : match.start()].replace("%", "%%")
        position = match.end()
        element = match.group(1)
        has_year = has_year or element in YEAR_ELEMENTS
        if element in PARSE_SAME:
            out += "%" + element
        elif element in ("D", "x", "F", "R", "T", "X"):
            out += ALIASES[element]
        elif element == "f":
            out += "%f"
        elif element in ("e", "-d"):
            out += "%-d"
        elif element == "c":
            out += "%a %b %-d %H:%M:%S %Y"
        elif element == "%":
            out += "%%"
        elif element == "z":
            out += "%z"
            has_offset = True
        else:
            raise not_supported(f"format element %{element} in {what}")
    out += fmt[position:].replace("%", "%%")
    return out, has_year, has_offset


def parse_call(node: exp.Expression) -> exp.Expression:
    """PARSE_DATE / PARSE_DATETIME / PARSE_TIME / PARSE_TIMESTAMP. BigQuery's default year is
    1970 (DuckDB's 1900); PARSE_TIMESTAMP reads the text in its time zone argument."""
    kind = PARSE_KINDS[type(node)]
    what = f"PARSE_{kind}"
    fmt, has_year, has_offset = _parse_format(_format_string(node.args.get("format"), what), what)
    text = node.this.sql(dialect="duckdb")
    if not has_year:
        fmt, text = "%Y " + fmt, f"('1970 ' || {text})"
    parsed = f"bq_strptime({text}, {_quote(fmt)})"
    zone = _zone(node.args.get("zone"), what)
    if kind == "TIMESTAMP":
        sql = (
            f"CAST({parsed} AS TIMESTAMPTZ)"
            if has_offset
            else f"bq_timezone({_quote(zone)}, CAST({parsed} AS TIMESTAMP))"
        )
    elif has_offset:
        raise not_supported(f"format element %z in {what}")
    else:
        sql = f"CAST({parsed} AS {dict(DATE='DATE', DATETIME='TIMESTAMP', TIME='TIME')[kind]})"
    return sqlglot.parse_one(sql, read="duckdb")
