"""One test per row of docs/googlesql.md's "GoogleSQL on the local BigQuery" table, through the real
client. Rows marked unsupported must fail loudly (BadRequest), never answer wrong."""

from __future__ import annotations

import datetime

import pytest
from google.api_core import exceptions
from google.cloud import bigquery

from vertexkit.context import CloudContext

PENGUINS = "`bigquery-public-data.ml_datasets.penguins`"


@pytest.fixture
def client(cloud_context: CloudContext) -> bigquery.Client:
    return cloud_context.bigquery_client()


def rows(client: bigquery.Client, sql: str) -> list[tuple]:
    return [tuple(row.values()) for row in client.query_and_wait(sql)]


def test_select_where_group_order_limit(client: bigquery.Client) -> None:
    got = rows(
        client,
        f"SELECT island, COUNT(*) n FROM {PENGUINS} WHERE sex = 'MALE' "
        "GROUP BY island ORDER BY n DESC LIMIT 1",
    )
    assert got == [("Biscoe", 83)]


def test_qualified_names_backticks_hyphens(client: bigquery.Client) -> None:
    assert rows(client, "SELECT COUNT(*) FROM `bigquery-public-data`.ml_datasets.penguins") == [
        (344,)
    ]


def test_with_cte_and_joins(client: bigquery.Client) -> None:
    got = rows(
        client,
        f"WITH s AS (SELECT DISTINCT species FROM {PENGUINS}) "
        f"SELECT COUNT(*) FROM s JOIN {PENGUINS} p USING (species)",
    )
    assert got == [(344,)]


def test_window_functions_and_qualify(client: bigquery.Client) -> None:
    got = rows(
        client,
        f"SELECT species, body_mass_g FROM {PENGUINS} WHERE body_mass_g IS NOT NULL "
        "QUALIFY ROW_NUMBER() OVER (PARTITION BY species ORDER BY body_mass_g DESC) = 1 "
        "ORDER BY species",
    )
    assert [mass for _, mass in got] == [4775.0, 4800.0, 6300.0]


def test_unnest_and_generate_array(client: bigquery.Client) -> None:
    assert rows(client, "SELECT SUM(x) FROM UNNEST(GENERATE_ARRAY(1, 10)) AS x") == [(55,)]


def test_struct_and_array_literals(client: bigquery.Client) -> None:
    got = rows(client, "SELECT STRUCT(1 AS a, 'b' AS b) s, [1, 2] arr, ARRAY_LENGTH([1, 2, 3]) n")
    assert got == [({"a": 1, "b": "b"}, [1, 2], 3)]


def test_select_except_replace(client: bigquery.Client) -> None:
    got = client.query_and_wait(f"SELECT * EXCEPT (sex) REPLACE (1 AS island) FROM {PENGUINS}")
    assert [f.name for f in got.schema][:2] == ["species", "island"]
    assert "sex" not in [f.name for f in got.schema]


def test_farm_fingerprint_split(client: bigquery.Client) -> None:
    got = rows(
        client,
        "SELECT FARM_FINGERPRINT(''), FARM_FINGERPRINT('1footrue'), "
        "MOD(ABS(FARM_FINGERPRINT('alphabet')), 10)",
    )
    assert got == [(-7286425919675154353, -1541654101129638711, 3)]


def test_safe_functions(client: bigquery.Client) -> None:
    assert rows(client, "SELECT SAFE_DIVIDE(1, 0), SAFE_CAST('x' AS INT64), IFNULL(NULL, 2)") == [
        (None, None, 2)
    ]


def test_generate_uuid(client: bigquery.Client) -> None:
    [(first, second)] = rows(client, "SELECT GENERATE_UUID(), GENERATE_UUID()")
    assert len(first) == 36 and first != second


def test_date_and_time_functions(client: bigquery.Client) -> None:
    got = rows(
        client,
        "SELECT DATE_TRUNC(DATE '2024-05-17', MONTH), "
        "DATE_ADD(DATE '2024-01-31', INTERVAL 1 DAY), "
        "DATE_DIFF(DATE '2024-03-01', DATE '2024-02-01', DAY), "
        "EXTRACT(YEAR FROM DATE '2024-05-17'), FORMAT_DATE('%Y/%m', DATE '2024-05-17')",
    )
    assert got == [(datetime.date(2024, 5, 1), datetime.date(2024, 2, 1), 29, 2024, "2024/05")]


def test_string_functions(client: bigquery.Client) -> None:
    got = rows(
        client,
        "SELECT CONCAT('a', 'b'), UPPER('x'), SPLIT('a,b', ','), REGEXP_CONTAINS('abc', r'b'), "
        "SUBSTR('hello', 2, 3), STARTS_WITH('abc', 'a')",
    )
    assert got == [("ab", "X", ["a", "b"], True, "ell", True)]


def test_aggregates(client: bigquery.Client) -> None:
    got = rows(
        client,
        f"SELECT COUNTIF(sex = 'FEMALE'), COUNT(DISTINCT island), ROUND(STDDEV(body_mass_g), 1), "
        f"ARRAY_AGG(DISTINCT island ORDER BY island) FROM {PENGUINS}",
    )
    assert got == [(165, 3, 802.0, ["Biscoe", "Dream", "Torgersen"])]


def test_ddl_dml_statements(client: bigquery.Client) -> None:
    client.create_dataset("sqltable_ddl", exists_ok=True)
    client.query_and_wait("CREATE OR REPLACE TABLE sqltable_ddl.t (id INT64, v STRING)")
    client.query_and_wait("INSERT INTO sqltable_ddl.t (id, v) VALUES (1, 'a'), (2, 'b')")
    client.query_and_wait("UPDATE sqltable_ddl.t SET v = 'c' WHERE id = 2")
    client.query_and_wait("DELETE FROM sqltable_ddl.t WHERE id = 1")
    client.query_and_wait(
        "MERGE sqltable_ddl.t T USING (SELECT 3 AS id, 'd' AS v) S ON T.id = S.id "
        "WHEN NOT MATCHED THEN INSERT (id, v) VALUES (S.id, S.v)"
    )
    assert rows(client, "SELECT id, v FROM sqltable_ddl.t ORDER BY id") == [(2, "c"), (3, "d")]
    client.query_and_wait("CREATE VIEW sqltable_ddl.v AS SELECT id FROM sqltable_ddl.t")
    assert rows(client, "SELECT COUNT(*) FROM sqltable_ddl.v") == [(2,)]
    client.query_and_wait("DROP VIEW sqltable_ddl.v")
    client.query_and_wait("DROP TABLE sqltable_ddl.t")


def test_query_parameters(client: bigquery.Client) -> None:
    config = bigquery.QueryJobConfig(
        query_parameters=[bigquery.ScalarQueryParameter("island", "STRING", "Dream")]
    )
    got = client.query_and_wait(
        f"SELECT COUNT(*) FROM {PENGUINS} WHERE island = @island", job_config=config
    )
    assert [tuple(r.values()) for r in got] == [(124,)]


@pytest.mark.parametrize(
    "sql",
    [
        f"SELECT SOUNDEX(island) FROM {PENGUINS}",  # no faithful translation
        "DECLARE i INT64 DEFAULT 0; WHILE i < 3 DO SET i = i + 1; END WHILE",  # script loops
        "SELECT * FROM ml_datasets.INFORMATION_SCHEMA.TABLES",
        "CREATE MODEL ml_datasets.m OPTIONS (model_type='linear_reg') AS SELECT 1 AS label",
        "SELECT * FROM ML.PREDICT(MODEL `ml_datasets.m`, (SELECT 1))",
    ],
)
def test_unsupported_constructs_fail_loudly(client: bigquery.Client, sql: str) -> None:
    with pytest.raises(exceptions.BadRequest):
        client.query_and_wait(sql)
