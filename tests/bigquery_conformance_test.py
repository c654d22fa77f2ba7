"""GoogleSQL conformance: each case in tests/googlesql_conformance/*.yaml is a query with the
answer BigQuery's documentation gives (the page is cited at the top of each file), run through
the real google-cloud-bigquery client against the session's local cloud.

Kinds of case:
- `sql` + `type` + `value`: one expression; a family's expressions run as one query (one column
  each) to keep the file fast, and each is checked on its own column.
- `query` + `rows` (+ `columns`): a whole query, run alone; checks names, order and values.
- `error`: BigQuery rejects it; the local BigQuery must too, with that text in the message.
- `refused` + `bigquery`: the local BigQuery cannot give BigQuery's answer (written beside it
  for later); it must refuse with "not supported by the local BigQuery: <refused>".
"""

from __future__ import annotations

import base64
import datetime
import decimal
import math
from pathlib import Path
from typing import Any

import pytest
import yaml
from dateutil import relativedelta
from google.api_core import exceptions
from google.cloud import bigquery
from google.cloud.bigquery import _helpers

CORPUS = Path(__file__).parent / "googlesql_conformance"
TYPE_NAMES = {"INTEGER": "INT64", "FLOAT": "FLOAT64", "BOOLEAN": "BOOL", "RECORD": "STRUCT"}


def _load() -> dict[str, list[dict[str, Any]]]:
    families = {}
    for path in sorted(CORPUS.glob("*.yaml")):
        document = yaml.safe_load(path.read_text())
        assert document["source"].startswith("https://"), f"{path.name} cites no page"
        families[path.stem] = document["cases"]
    return families


FAMILIES = _load()
CASES = [(family, case) for family, cases in FAMILIES.items() for case in cases]
IDS = [f"{family}-{case['id']}" for family, case in CASES]


class IntervalText(str):
    """An INTERVAL as the client parsed it (a relativedelta), in BigQuery's canonical text."""


def interval_text(value: relativedelta.relativedelta) -> IntervalText:
    """relativedelta carries 24 hours into a day and 12 months into a year, so the text is of
    the client's normalized value: compared with the corpus's text parsed the same way."""
    months = value.years * 12 + value.months
    micros = ((value.hours * 60 + value.minutes) * 60 + value.seconds) * 10**6 + value.microseconds
    years, month = divmod(abs(months), 12)
    hours, rest = divmod(abs(micros), 3600 * 10**6)
    minutes, rest = divmod(rest, 60 * 10**6)
    seconds, fraction = divmod(rest, 10**6)
    text = (
        f"{'-' if months < 0 else ''}{years}-{month} {value.days} "
        f"{'-' if micros < 0 else ''}{hours}:{minutes}:{seconds}"
    )
    if fraction:  # in groups of three digits, as BigQuery writes them
        millis, micro = divmod(fraction, 1000)
        text += f".{millis:03d}" + (f"{micro:03d}" if micro else "")
    return IntervalText(text)


def client_interval(text: str) -> IntervalText:
    """The corpus's INTERVAL text (BigQuery's canonical format) as the client would parse it."""
    field = bigquery.SchemaField("v", "INTERVAL")
    return interval_text(_helpers.CELL_DATA_PARSER.interval_to_py(text, field))


def canonical(value: Any) -> Any:
    """A client value in the form the corpus writes answers in."""
    if isinstance(value, relativedelta.relativedelta):
        return interval_text(value)
    if isinstance(value, datetime.datetime) and value.tzinfo is not None:
        return value.astimezone(datetime.UTC).isoformat()
    if isinstance(value, (datetime.date, datetime.time, datetime.datetime)):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        text = format(value, "f")  # normalize() would round to 28 digits
        return text.rstrip("0").rstrip(".") if "." in text else text
    if isinstance(value, bytes):
        return "b64:" + base64.b64encode(value).decode()
    if isinstance(value, list):
        return [canonical(item) for item in value]
    if isinstance(value, dict):
        return {key: canonical(item) for key, item in value.items()}
    return value


def same(got: Any, expected: Any) -> bool:
    if isinstance(got, IntervalText):  # the wire text went through the client's parser
        return isinstance(expected, str) and got == client_interval(expected)
    if isinstance(expected, float) and isinstance(got, (int, float)):
        if math.isnan(expected):
            return math.isnan(got)
        return math.isclose(got, expected, rel_tol=1e-9, abs_tol=1e-12)
    if isinstance(expected, list) and isinstance(got, list):
        return len(got) == len(expected) and all(map(same, got, expected))
    if isinstance(expected, str) and isinstance(got, (int, float)) and expected.startswith("num:"):
        return same(got, float(expected[4:]))
    return (type(got) is type(expected) and got == expected) or (
        isinstance(expected, dict) and got == expected
    )


def field_type(field: bigquery.SchemaField) -> str:
    kind = TYPE_NAMES.get(field.field_type, field.field_type)
    return f"ARRAY<{kind}>" if field.mode == "REPEATED" else kind


@pytest.fixture(scope="module")
def client(local_cloud: Any) -> bigquery.Client:
    return local_cloud.context().bigquery_client()


@pytest.fixture(scope="module")
def batches(client: bigquery.Client) -> dict[str, Any]:
    """Each family's `sql` cases as one query: {family: (schema by case id, row) or error}."""
    answers: dict[str, Any] = {}
    for family, cases in FAMILIES.items():
        plain = [c for c in cases if "sql" in c and "error" not in c and "refused" not in c]
        if not plain:
            continue
        columns = ", ".join(f"({c['sql']}) AS `{c['id']}`" for c in plain)
        try:
            result = client.query_and_wait(f"SELECT {columns}")
            answers[family] = ({f.name: f for f in result.schema}, next(iter(result)))
        except exceptions.GoogleAPICallError as error:
            answers[family] = error
    return answers


def _run_alone(client: bigquery.Client, case: dict[str, Any]) -> Any:
    sql = case.get("query") or f"SELECT ({case['sql']}) AS v"
    return client.query_and_wait(sql)


@pytest.mark.parametrize(("family", "case"), CASES, ids=IDS)
def test_googlesql_case(
    family: str, case: dict[str, Any], client: bigquery.Client, batches: dict[str, Any]
) -> None:
    if "refused" in case:
        assert "bigquery" in case, "a refused case keeps BigQuery's answer beside it"
        with pytest.raises(exceptions.BadRequest) as refusal:
            _run_alone(client, case)
        assert f"not supported by the local BigQuery: {case['refused']}" in str(refusal.value)
        return
    if "error" in case:
        with pytest.raises(exceptions.BadRequest) as rejected:
            _run_alone(client, case)
        assert case["error"] in str(rejected.value)
        assert "Error: " not in str(rejected.value).split(": ", 1)[-1], "a raw DuckDB message"
        return
    if "query" in case:
        result = client.query_and_wait(case["query"])
        if "columns" in case:
            assert [f.name for f in result.schema] == case["columns"]
        if "types" in case:
            assert [field_type(f) for f in result.schema] == case["types"]
        rows = [[canonical(v) for v in row.values()] for row in result]
        expected = case["rows"]
        assert len(rows) == len(expected) and all(map(same, rows, expected)), (rows, expected)
        return
    answer = batches[family]
    if isinstance(answer, Exception):  # the batch failed: this case gets its own verdict
        result = _run_alone(client, case)
        schema, row = {case["id"]: result.schema[0]}, {case["id"]: next(iter(result))[0]}
    else:
        schema, row = answer
    assert field_type(schema[case["id"]]) == case["type"]
    got = canonical(row[case["id"]])
    assert same(got, case["value"]), (got, case["value"])
