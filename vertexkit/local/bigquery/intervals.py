"""GoogleSQL's INTERVAL on DuckDB's INTERVAL.

Both keep an interval as three independent parts, months, days and microseconds, each with its
own sign, and both compare intervals as one duration with a month of 30 days and a day of
24 hours (`INTERVAL 1 MONTH = INTERVAL 30 DAY` is TRUE in each; equal intervals also group
together). Nothing normalizes the parts but JUSTIFY_*.
https://cloud.google.com/bigquery/docs/reference/standard-sql/data-types#interval_type

Where DuckDB's answer differs from BigQuery's, the parsed tree is rewritten here:
- literals (`INTERVAL 5 DAY`, `INTERVAL '1-2 3 4:5:6.789' YEAR TO SECOND`) are parsed here, with
  BigQuery's range checks, into DuckDB parts (DuckDB reads neither range strings nor
  BigQuery's canonical text);
- MAKE_INTERVAL, JUSTIFY_*, `* INT64`, `/ INT64`, CAST to and from STRING and the range check
  of `+`/`-` are Python UDFs over Arrow's month_day_nano values, written from BigQuery's rules
  (interval_functions and operators pages);
- DATE - DATE is an INTERVAL of days (DuckDB: an INT64), TIMESTAMP - TIMESTAMP one of
  microseconds only (DuckDB splits off whole days).
A result column leaves in BigQuery's canonical text (`responses.py`), which the client parses.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import duckdb
from sqlglot import exp

from vertexkit.local.bigquery.bind_refusal import refused_when
from vertexkit.local.bigquery.query_error import QueryError, not_supported

MICROS_PER_SECOND = 10**6
MICROS_PER_MINUTE = 60 * MICROS_PER_SECOND
MICROS_PER_HOUR = 60 * MICROS_PER_MINUTE
MICROS_PER_DAY = 24 * MICROS_PER_HOUR
DAYS_PER_MONTH = 30  # BigQuery's JUSTIFY_DAYS, division and comparison all count 30
# BigQuery's range: -10000-0 -3660000 -87840000:0:0 to 10000-0 3660000 87840000:0:0
LIMITS = {"months": 12 * 10000, "days": 366 * 10000, "microseconds": 366 * 10000 * MICROS_PER_DAY}


@dataclass(frozen=True)
class Interval:
    months: int
    days: int
    micros: int

    def checked(self) -> Interval:
        """This interval, or BigQuery's error for a part out of range."""
        for name, value in (
            ("months", self.months),
            ("days", self.days),
            ("microseconds", self.micros),
        ):
            limit = LIMITS[name]
            if not -limit <= value <= limit:
                raise ValueError(
                    f"Interval field {name} '{value}' is out of range -{limit} to {limit}"
                )
        return self


# -- BigQuery's canonical text: [sign]Y-M [sign]D [sign]H:M:S[.F] --------------------------------
def canonical_text(months: int, days: int, micros: int) -> str:
    """As BigQuery writes an interval (results, CAST AS STRING): the year-month sign once,
    the fraction in groups of three digits, only as long as needed."""
    years, month = divmod(abs(months), 12)
    hours, rest = divmod(abs(micros), MICROS_PER_HOUR)
    minutes, rest = divmod(rest, MICROS_PER_MINUTE)
    seconds, fraction = divmod(rest, MICROS_PER_SECOND)
    text = (
        f"{'-' if months < 0 else ''}{years}-{month} {days} "
        f"{'-' if micros < 0 else ''}{hours}:{minutes}:{seconds}"
    )
    if fraction:
        millis, micro = divmod(fraction, 1000)
        text += f".{millis:03d}" + (f"{micro:03d}" if micro else "")
    return text


# -- parsing ---------------------------------------------------------------------------------------
SINGLE_PARTS = {  # part -> (months, days, microseconds) per unit
    "YEAR": (12, 0, 0),
    "QUARTER": (3, 0, 0),
    "MONTH": (1, 0, 0),
    "WEEK": (0, 7, 0),
    "DAY": (0, 1, 0),
    "HOUR": (0, 0, MICROS_PER_HOUR),
    "MINUTE": (0, 0, MICROS_PER_MINUTE),
    "SECOND": (0, 0, MICROS_PER_SECOND),
}
ORDER = ("YEAR", "MONTH", "DAY", "HOUR", "MINUTE", "SECOND")
# Each part's text in the range forms (BigQuery's table of "datetime part strings"): the
# year-month sign stands before the first of years and months and applies to both, the time
# sign before the first of hours and minutes and applies to the whole time; days have their own.
PIECES = {
    "YEAR": r"(?P<msign>[-+])?(?P<years>\d+)",
    "MONTH": r"(?P<months>\d+)",
    "DAY": r"(?P<days>[-+]?\d+)",
    "HOUR": r"(?P<tsign>[-+])?(?P<hours>\d+)",
    "MINUTE": r"(?P<minutes>\d+)",
    "SECOND": r"(?P<seconds>\d+)(?:\.(?P<fraction>\d{1,9}))?",
}
LEADING_SIGN = {"MONTH": r"(?P<msign>[-+])?", "MINUTE": r"(?P<tsign>[-+])?"}
SEPARATOR_BEFORE = {"MONTH": "-", "DAY": " ", "HOUR": " ", "MINUTE": ":", "SECOND": ":"}


def _range_pattern(start: str, end: str) -> re.Pattern[str]:
    """`Y-M D H:M:S` cut to start..end, e.g. DAY TO MINUTE: `D H:M`."""
    parts = ORDER[ORDER.index(start) : ORDER.index(end) + 1]
    pattern = LEADING_SIGN.get(start, "") + PIECES[start]
    for part in parts[1:]:
        pattern += SEPARATOR_BEFORE[part] + PIECES[part]
    return re.compile(pattern)


def parse_range(text: str, start: str, end: str) -> Interval:
    """`INTERVAL 'text' start TO end`; ValueError with BigQuery's message."""
    if start not in ORDER or end not in ORDER or ORDER.index(start) >= ORDER.index(end):
        raise ValueError(f"Invalid interval datetime fields: {start} TO {end}")
    match = _range_pattern(start, end).fullmatch(text)
    if match is None:
        raise ValueError(f"Invalid INTERVAL value '{text}'")
    return _from_groups(match.groupdict()).checked()


def _from_groups(groups: dict[str, str | None]) -> Interval:
    def number(name: str) -> int:
        return int(groups.get(name) or 0)

    months = number("years") * 12 + number("months")
    if groups.get("msign") == "-":
        months = -months
    fraction = (groups.get("fraction") or "").ljust(9, "0")
    if fraction[6:].strip("0"):
        raise ValueError("not supported by the local BigQuery: INTERVAL below a microsecond")
    micros = (
        number("hours") * MICROS_PER_HOUR
        + number("minutes") * MICROS_PER_MINUTE
        + number("seconds") * MICROS_PER_SECOND
        + int(fraction[:6])
    )
    if groups.get("tsign") == "-":
        micros = -micros
    return Interval(months, number("days"), micros)


def parse_single(text: str, part: str) -> Interval:
    """`INTERVAL 'text' part` (`INTERVAL 5 DAY` reads the same): an integer, or seconds with a
    fraction."""
    if part == "SECOND":
        match = re.fullmatch(r"([-+])?(\d*)\.(\d{1,9})", text)
        if match:
            sign, whole, digits = match.groups()
            groups = {"tsign": sign, "seconds": whole, "fraction": digits}
            return _from_groups(groups).checked()
    if not re.fullmatch(r"[-+]?\d+", text):
        raise ValueError(f"Invalid INTERVAL value '{text}'")
    count = int(text)
    months, days, micros = SINGLE_PARTS[part]
    return Interval(count * months, count * days, count * micros).checked()


def parse_text(text: str) -> Interval:
    """CAST(STRING AS INTERVAL): the range form its separators name (BigQuery counts spaces,
    colons and dashes after a digit), as BigQuery reads it."""
    if text.startswith("P"):
        raise ValueError(
            "not supported by the local BigQuery: CAST of an ISO 8601 duration to INTERVAL"
        )
    spaces, colons = text.count(" "), text.count(":")
    dashes = len(re.findall(r"(?<=\d)-", text))
    forms = {
        (2, 2, 1): ("YEAR", "SECOND"), (2, 1, 1): ("YEAR", "MINUTE"), (2, 0, 1): ("YEAR", "HOUR"),
        (1, 0, 1): ("YEAR", "DAY"), (0, 0, 1): ("YEAR", "MONTH"), (2, 0, 0): ("MONTH", "HOUR"),
        (2, 1, 0): ("MONTH", "MINUTE"), (2, 2, 0): ("MONTH", "SECOND"),
        (1, 1, 0): ("DAY", "MINUTE"), (1, 2, 0): ("DAY", "SECOND"), (0, 2, 0): ("HOUR", "SECOND"),
    }  # fmt: skip
    form = forms.get((spaces, colons, dashes))
    if form is None:
        raise ValueError(f"Invalid INTERVAL value '{text}'")
    return parse_range(text, *form)


# -- BigQuery's operations on parts ----------------------------------------------------------------
def _truncated_divmod(value: int, divisor: int) -> tuple[int, int]:
    """C's division (toward zero), as BigQuery divides interval parts."""
    quotient = abs(value) // abs(divisor) * (1 if (value < 0) == (divisor < 0) else -1)
    return quotient, value - quotient * divisor


def _carried(larger: int, smaller: int, per_larger: int) -> tuple[int, int]:
    """`smaller` folded into whole units of `larger` (`per_larger` each), what is left of it
    within one unit, the two of one sign: JUSTIFY_DAYS's and JUSTIFY_HOURS's rule."""
    extra, smaller = _truncated_divmod(smaller, per_larger)
    larger += extra
    if larger > 0 and smaller < 0:
        larger, smaller = larger - 1, smaller + per_larger
    elif larger < 0 and smaller > 0:
        larger, smaller = larger + 1, smaller - per_larger
    return larger, smaller


def justify_hours(value: Interval) -> Interval:
    """Time into whole days, the time part in -23:59:59.999999 to 23:59:59.999999, days and
    time of one sign."""
    days, micros = _carried(value.days, value.micros, MICROS_PER_DAY)
    return Interval(value.months, days, micros).checked()


def justify_days(value: Interval) -> Interval:
    """Days into 30-day months, the day part in -29 to 29, months and days of one sign."""
    months, days = _carried(value.months, value.days, DAYS_PER_MONTH)
    return Interval(months, days, value.micros).checked()


def justify_interval(value: Interval) -> Interval:
    """Both justifications, with every part of one sign."""
    extra, micros = _truncated_divmod(value.micros, MICROS_PER_DAY)
    extra_months, days = _truncated_divmod(value.days + extra, DAYS_PER_MONTH)
    months = value.months + extra_months
    if months > 0 and (days < 0 or (days == 0 and micros < 0)):
        months, days = months - 1, days + DAYS_PER_MONTH
    elif months < 0 and (days > 0 or (days == 0 and micros > 0)):
        months, days = months + 1, days - DAYS_PER_MONTH
    if days > 0 and micros < 0:
        days, micros = days - 1, micros + MICROS_PER_DAY
    elif days < 0 and micros > 0:
        days, micros = days + 1, micros - MICROS_PER_DAY
    return Interval(months, days, micros).checked()


def multiply(value: Interval, factor: int) -> Interval:
    product = Interval(value.months * factor, value.days * factor, value.micros * factor)
    try:
        return product.checked()
    except ValueError:
        raise ValueError("Interval overflow during multiplication") from None


def divide(value: Interval, divisor: int) -> Interval:
    """Each part's remainder carries into the next (a month as 30 days, a day as 24 hours)."""
    if divisor == 0:
        raise ValueError("Interval division by zero")
    months, left = _truncated_divmod(value.months, divisor)
    days, left = _truncated_divmod(value.days + left * DAYS_PER_MONTH, divisor)
    micros, left = _truncated_divmod(value.micros + left * MICROS_PER_DAY, divisor)
    if left:  # BigQuery carries the rest into nanoseconds, which the local one cannot hold
        raise ValueError(
            "not supported by the local BigQuery: INTERVAL division with a remainder below a "
            "microsecond"
        )
    return Interval(months, days, micros).checked()


def make_interval(year: int, month: int, day: int, hour: int, minute: int, second: int) -> Interval:
    micros = hour * MICROS_PER_HOUR + minute * MICROS_PER_MINUTE + second * MICROS_PER_SECOND
    return Interval(year * 12 + month, day, micros).checked()


# -- UDFs --------------------------------------------------------------------------------------
# The UDFs take and give DuckDB's own interval text ('-1 year -2 months 3 days -00:00:04.000001'
# in, '14 months 3 days 4000 microseconds' out), which DuckDB writes and reads exactly: Arrow's
# month_day_nano would carry the time part in int64 nanoseconds, which overflow past 106751 days
# (BigQuery allows 87840000 hours).
DUCKDB_TEXT = re.compile(
    r"(?:(?P<years>-?\d+) years? ?)?(?:(?P<months>-?\d+) months? ?)?(?:(?P<days>-?\d+) days? ?)?"
    r"(?:(?P<tsign>-)?(?P<hours>\d+):(?P<minutes>\d+):(?P<seconds>\d+)(?:\.(?P<fraction>\d+))?)?"
)


def from_duckdb(text: str) -> Interval:
    match = DUCKDB_TEXT.fullmatch(text)
    if match is None:
        raise ValueError(f"not supported by the local BigQuery: the interval {text!r}")
    groups = match.groupdict()
    months = int(groups["years"] or 0) * 12 + int(groups["months"] or 0)
    time = _from_groups(
        {key: groups[key] for key in ("tsign", "hours", "minutes", "seconds", "fraction")}
    )
    return Interval(months, int(groups["days"] or 0), time.micros)


def to_duckdb(value: Interval) -> str:
    return f"{value.months} months {value.days} days {value.micros} microseconds"


def _text_udf(function: Callable[[Interval], Interval]) -> Callable[[str], str]:
    """A BigQuery operation on an interval as a UDF over DuckDB's text (DuckDB counts a UDF's
    parameters, so each arity has its own wrapper)."""
    return lambda text: to_duckdb(function(from_duckdb(text)))


def _scaling_udf(function: Callable[[Interval, int], Interval]) -> Callable[[str, int], str]:
    return lambda text, number: to_duckdb(function(from_duckdb(text), number))


def _make_interval_text(
    year: int, month: int, day: int, hour: int, minute: int, second: int
) -> str:
    return to_duckdb(make_interval(year, month, day, hour, minute, second))


def _canonical_of_duckdb(text: str) -> str:
    value = from_duckdb(text)
    return canonical_text(value.months, value.days, value.micros)


def _safe_parse(text: str) -> str | None:
    try:
        return to_duckdb(parse_text(text))
    except ValueError as error:
        if "not supported by the local BigQuery" in str(error):
            raise
        return None


UDFS: list[tuple[str, Callable[..., object], list[str], str]] = [
    ("bq_make_interval_text", _make_interval_text, ["BIGINT"] * 6, "VARCHAR"),
    ("bq_interval_checked_text", _text_udf(Interval.checked), ["VARCHAR"], "VARCHAR"),
    ("bq_justify_days_text", _text_udf(justify_days), ["VARCHAR"], "VARCHAR"),
    ("bq_justify_hours_text", _text_udf(justify_hours), ["VARCHAR"], "VARCHAR"),
    ("bq_justify_interval_text", _text_udf(justify_interval), ["VARCHAR"], "VARCHAR"),
    ("bq_interval_multiply_text", _scaling_udf(multiply), ["VARCHAR", "BIGINT"], "VARCHAR"),
    ("bq_interval_divide_text", _scaling_udf(divide), ["VARCHAR", "BIGINT"], "VARCHAR"),
    ("bq_interval_canonical", _canonical_of_duckdb, ["VARCHAR"], "VARCHAR"),
    ("bq_interval_parse_text", lambda text: to_duckdb(parse_text(text)), ["VARCHAR"], "VARCHAR"),
    ("bq_safe_interval_parse_text", _safe_parse, ["VARCHAR"], "VARCHAR"),
]  # fmt: skip
# What the rewrites call: each UDF between DuckDB's text and its INTERVAL.
MACROS = {
    # A value DuckDB would write as its own interval text ('1 day'), where BigQuery writes its
    # canonical one: refused when DuckDB binds the query (any INTERVAL, nested ones too).
    "bq_no_interval(x, name)": "CASE WHEN "
    + refused_when(
        "typeof(x) LIKE '%INTERVAL%'",
        "'not supported by the local BigQuery: ' || name || ' of an INTERVAL'",
    )
    + " THEN x END",
    # `a - b` of operands whose types the query does not state (typeof is known when DuckDB
    # binds the query, so only the branch of the operands' types remains).
    "bq_subtract(a, b)": "CASE WHEN "
    + refused_when(
        "typeof(a) IN ('DATE', 'TIMESTAMP', 'TIMESTAMP WITH TIME ZONE') AND typeof(b) = typeof(a)",
        "'not supported by the local BigQuery: DATE, DATETIME or TIMESTAMP subtraction of "
        "values whose type the query does not state (CAST them, or use DATE_DIFF / "
        "TIMESTAMP_DIFF)'",
    )
    + " THEN a - b END",
    "bq_make_interval(y, mo, d, h, mi, s)": (
        "CAST(bq_make_interval_text(y, mo, d, h, mi, s) AS INTERVAL)"
    ),
    "bq_interval_checked(x)": "CAST(bq_interval_checked_text(CAST(x AS VARCHAR)) AS INTERVAL)",
    "bq_justify_days(x)": "CAST(bq_justify_days_text(CAST(x AS VARCHAR)) AS INTERVAL)",
    "bq_justify_hours(x)": "CAST(bq_justify_hours_text(CAST(x AS VARCHAR)) AS INTERVAL)",
    "bq_justify_interval(x)": "CAST(bq_justify_interval_text(CAST(x AS VARCHAR)) AS INTERVAL)",
    "bq_interval_multiply(x, n)": (
        "CAST(bq_interval_multiply_text(CAST(x AS VARCHAR), n) AS INTERVAL)"
    ),
    "bq_interval_divide(x, n)": "CAST(bq_interval_divide_text(CAST(x AS VARCHAR), n) AS INTERVAL)",
    "bq_interval_string(x)": "bq_interval_canonical(CAST(x AS VARCHAR))",
    "bq_interval_from_string(s)": "CAST(bq_interval_parse_text(s) AS INTERVAL)",
    "bq_safe_interval_from_string(s)": "CAST(bq_safe_interval_parse_text(s) AS INTERVAL)",
}
# The result types of these macros and of the DuckDB calls the rewrites write (a literal is
# to_months(..) + to_days(..) + to_microseconds(..)), for googlesql.static_type.
MACRO_TYPES = {
    **{signature.split("(")[0]: "INTERVAL" for signature in MACROS},
    "bq_interval_string": "STRING",
    "to_months": "INTERVAL",
    "to_days": "INTERVAL",
    "to_microseconds": "INTERVAL",
}


# -- values in and out of the API ------------------------------------------------------------------
def parameter(text: str) -> duckdb.Value:
    """A query parameter or streamed cell of type INTERVAL (BigQuery's text forms) as an exact
    DuckDB INTERVAL to bind; ValueError for a text BigQuery rejects."""
    return duckdb.Value(to_duckdb(parse_text(text)), duckdb.sqltype("INTERVAL"))


def refuse_interval_columns(fields: list[dict], where: str) -> None:
    """`where` cannot carry an INTERVAL exactly (DuckDB's text or Arrow's month_day_nano would
    leave instead of BigQuery's): refused by name."""
    for field in fields:
        if str(field.get("type", "")).upper() == "INTERVAL":
            raise not_supported(f"INTERVAL columns in {where} (column {field.get('name')})")
        refuse_interval_columns(field.get("fields") or [], where)


def exportable(relation: duckdb.DuckDBPyRelation) -> duckdb.DuckDBPyRelation:
    """A result with its INTERVAL columns as BigQuery's canonical text, ready for Arrow (whose
    month_day_nano overflows, see above); an INTERVAL inside an ARRAY or STRUCT is refused."""
    columns, changed = [], False
    for name, kind in zip(relation.columns, relation.types, strict=True):
        column = '"' + name.replace('"', '""') + '"'
        if kind.id == "interval":
            columns.append(f"bq_interval_string({column}) AS {column}")
            changed = True
        elif holds_interval(kind):
            raise not_supported(f"INTERVAL inside an ARRAY or STRUCT (column {name})")
        else:
            columns.append(column)
    return relation.project(", ".join(columns)) if changed else relation


def holds_interval(kind: duckdb.typing.DuckDBPyType) -> bool:
    """Whether a column of this type is or holds an INTERVAL."""
    if kind.id == "interval":
        return True
    if kind.id in ("list", "struct", "array", "map"):
        return any(holds_interval(child) for _, child in kind.children)
    return False


# -- rewrites of the parsed tree (googlesql.py registers them) -------------------------------------
StaticType = Callable[[exp.Expression], "str | None"]
# Where an INTERVAL literal is a step, not a value: the caller's own translation reads it.
STEP_OF = (exp.GenerateDateArray, exp.GenerateTimestampArray)


def _call(name: str, *args: exp.Expression) -> exp.Anonymous:
    return exp.Anonymous(this=name, expressions=list(args))


def _duckdb_parts(value: Interval) -> exp.Expression:
    """An interval constant in DuckDB SQL, each part kept apart."""
    return exp.paren(
        exp.Add(
            this=exp.Add(
                this=_call("to_months", exp.Literal.number(value.months)),
                expression=_call("to_days", exp.Literal.number(value.days)),
            ),
            expression=_call("to_microseconds", exp.Literal.number(value.micros)),
        )
    )


def literal(node: exp.Interval) -> exp.Expression | None:
    """`INTERVAL 5 DAY`, `INTERVAL x HOUR`, `INTERVAL '1-2 3' YEAR TO DAY`."""
    if isinstance(node.parent, STEP_OF):
        return None
    unit = node.args.get("unit")
    if isinstance(unit, exp.IntervalSpan):
        start, end = unit.this.name.upper(), unit.expression.name.upper()
        if not (isinstance(node.this, exp.Literal) and node.this.is_string):
            raise QueryError(f"INTERVAL ... {start} TO {end} takes a string literal")
        return _duckdb_parts(_at_analysis(parse_range, node.this.this, start, end))
    part = unit.name.upper() if unit is not None else ""
    if part not in SINGLE_PARTS:
        allowed = ", ".join(SINGLE_PARTS)
        raise not_supported(f"INTERVAL ... {part or '(no part)'} (the parts are {allowed})")
    if isinstance(node.this, exp.Literal):
        return _duckdb_parts(_at_analysis(parse_single, node.this.this, part))
    # An expression: MAKE_INTERVAL's slots (year, month, day, hour, minute, second), a
    # quarter as 3 months and a week as 7 days.
    slots: list[exp.Expression] = [exp.Literal.number(0)] * 6
    slot, factor = {"QUARTER": ("MONTH", 3), "WEEK": ("DAY", 7)}.get(part, (part, 1))
    count = node.this.copy()
    if factor != 1:
        count = exp.Mul(this=exp.paren(count), expression=exp.Literal.number(factor))
    slots[ORDER.index(slot)] = count
    return _call("bq_make_interval", *(exp.cast(s, "BIGINT") for s in slots))


def _at_analysis(parse: Callable[..., Interval], *args: str) -> Interval:
    """A literal's error is a query error, raised before anything runs (as in BigQuery)."""
    try:
        return parse(*args)
    except ValueError as error:
        raise QueryError(str(error)) from None


MAKE_INTERVAL_ARGUMENTS = ("year", "month", "day", "hour", "minute", "second")


def make_interval_call(node: exp.MakeInterval) -> exp.Expression:
    """MAKE_INTERVAL([year][, month][, day][, hour][, minute][, second]), each optional, 0 by
    default, positional or named."""
    values = {name: exp.Literal.number(0) for name in MAKE_INTERVAL_ARGUMENTS}
    for slot in MAKE_INTERVAL_ARGUMENTS:
        argument = node.args.get(slot)
        if argument is None:
            continue
        if isinstance(argument, exp.Kwarg):
            name = argument.this.name.lower()
            if name not in values:
                allowed = ", ".join(MAKE_INTERVAL_ARGUMENTS)
                raise QueryError(f"MAKE_INTERVAL has no argument named {name}; it takes {allowed}")
            values[name] = argument.expression
        else:
            values[slot] = argument
    return _call("bq_make_interval", *(exp.cast(v, "BIGINT") for v in values.values()))


def justify(name: str) -> Callable[[exp.Func], exp.Expression]:
    return lambda node: _call(f"bq_{name}", node.this)


def temporal_type(node: exp.Expression) -> str | None:
    """DATE / DATETIME / TIMESTAMP / TIME / INTERVAL when the node's own form says so."""
    if isinstance(node, exp.Interval) and not isinstance(node.parent, STEP_OF):
        return "INTERVAL"
    if isinstance(node, (exp.MakeInterval, exp.JustifyDays, exp.JustifyHours, exp.JustifyInterval)):
        return "INTERVAL"
    if isinstance(node, exp.Anonymous) and node.name.lower() in MACRO_TYPES:
        return MACRO_TYPES[node.name.lower()]
    if isinstance(node, (exp.Cast, exp.TryCast)):
        kinds = {
            exp.DataType.Type.DATE: "DATE",
            exp.DataType.Type.DATETIME: "DATETIME",
            exp.DataType.Type.TIMESTAMP: "DATETIME",
            exp.DataType.Type.TIMESTAMPTZ: "TIMESTAMP",
            exp.DataType.Type.TIME: "TIME",
            exp.DataType.Type.INTERVAL: "INTERVAL",
        }
        return kinds.get(node.to.this)
    if isinstance(node, exp.CurrentDate):
        return "DATE"
    if isinstance(node, exp.CurrentTimestamp):
        return "TIMESTAMP"
    return None


def subtraction(node: exp.Sub, static_type: StaticType) -> exp.Expression | None:
    """DATE - DATE: the days between as an INTERVAL; TIMESTAMP - TIMESTAMP: the microseconds
    between (BigQuery keeps no day part there); INTERVAL - INTERVAL: range-checked."""
    kinds = (static_type(node.this), static_type(node.expression))
    if kinds == ("DATE", "DATE"):
        return _call(
            "to_days",
            exp.cast(
                exp.Sub(this=exp.paren(node.this), expression=exp.paren(node.expression)), "INTEGER"
            ),
        )
    if kinds == ("TIMESTAMP", "TIMESTAMP"):
        return _call(
            "to_microseconds",
            exp.Sub(
                this=_call("epoch_us", node.this), expression=_call("epoch_us", node.expression)
            ),
        )
    if kinds == ("DATETIME", "DATETIME"):
        raise not_supported("DATETIME - DATETIME (use DATETIME_DIFF)")
    if set(kinds) <= {None, "DATE", "DATETIME", "TIMESTAMP"}:
        # Operands the query does not type: DuckDB's DATE - DATE (an INT64) and TIMESTAMP -
        # TIMESTAMP (days split off) are refused when DuckDB binds them (bq_subtract).
        return _call("bq_subtract", node.this, node.expression)
    return _checked_sum(node, kinds)


def addition(node: exp.Add, static_type: StaticType) -> exp.Expression | None:
    return _checked_sum(node, (static_type(node.this), static_type(node.expression)))


def _checked_sum(
    node: exp.Add | exp.Sub, kinds: tuple[str | None, str | None]
) -> exp.Expression | None:
    if "INTERVAL" not in kinds:
        return None
    if kinds == ("INTERVAL", "INTERVAL"):
        return _call("bq_interval_checked", node.copy())
    other = kinds[1] if kinds[0] == "INTERVAL" else kinds[0]
    if other == "TIME" or other in ("INT64", "FLOAT64", "NUMERIC", "STRING"):
        operator = "+" if isinstance(node, exp.Add) else "-"
        raise QueryError(
            f"No matching signature for operator {operator} for argument types: "
            f"{kinds[0] or 'unknown'}, {kinds[1] or 'unknown'}"
        )
    return None


def multiplication(node: exp.Mul, static_type: StaticType) -> exp.Expression | None:
    """INTERVAL * INT64 (either order): each part multiplied, range-checked."""
    kinds = (static_type(node.this), static_type(node.expression))
    if "INTERVAL" not in kinds:
        return None
    interval, factor = (
        (node.this, node.expression) if kinds[0] == "INTERVAL" else (node.expression, node.this)
    )
    factor_kind = kinds[1] if kinds[0] == "INTERVAL" else kinds[0]
    if factor_kind not in ("INT64", None):
        raise QueryError(
            f"No matching signature for operator * for argument types: INTERVAL, {factor_kind}"
        )
    return _call("bq_interval_multiply", interval, exp.cast(factor, "BIGINT"))


def division(node: exp.Div, static_type: StaticType) -> exp.Expression | None:
    """INTERVAL / INT64: the rest of each part carried into the next."""
    if static_type(node.this) != "INTERVAL":
        return None
    divisor_kind = static_type(node.expression)
    if divisor_kind not in ("INT64", None):
        raise QueryError(
            f"No matching signature for operator / for argument types: INTERVAL, {divisor_kind}"
        )
    return _call("bq_interval_divide", node.this, exp.cast(node.expression, "BIGINT"))


def cast(node: exp.Cast, static_type: StaticType) -> exp.Expression | None:
    """CAST(STRING AS INTERVAL) reads BigQuery's text forms; CAST(INTERVAL AS STRING) writes
    the canonical one."""
    safe = isinstance(node, exp.TryCast)
    source = static_type(node.this)
    if node.to.is_type(exp.DataType.Type.INTERVAL):
        if source == "INTERVAL":
            return node.this
        if source not in ("STRING", None):
            raise QueryError(f"Invalid cast from {source} to INTERVAL")
        parse = "bq_safe_interval_from_string" if safe else "bq_interval_from_string"
        return _call(parse, exp.cast(node.this, "VARCHAR"))
    if source == "INTERVAL" and node.to.is_type(*exp.DataType.TEXT_TYPES):
        return _call("bq_interval_string", node.this)
    return None


EXTRACT_PARTS = ("YEAR", "MONTH", "DAY", "HOUR", "MINUTE", "SECOND", "MILLISECOND", "MICROSECOND")


def check_extract_part(part: str) -> None:
    """EXTRACT(part FROM interval): DuckDB's year(), month(), ... of an interval read its parts
    as BigQuery's EXTRACT does (HOUR counts every hour of the time part); other parts are
    BigQuery's error."""
    if part not in EXTRACT_PARTS:
        raise QueryError(
            f"EXTRACT from INTERVAL does not support the {part} date part; the parts are "
            + ", ".join(EXTRACT_PARTS)
        )
