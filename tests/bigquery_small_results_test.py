"""Small query results kept in memory, their jobs and results written in the background
(vertexkit/local/bigquery/recorder.py), through google-cloud-bigquery: every path that reads
an anonymous result table still finds it, across a restart too, and a large result or an array
with a NULL element takes BigQuery's answers as before."""

from __future__ import annotations

from pathlib import Path

import pytest
from google.api_core import exceptions

from vertexkit.local import LocalCloud


def test_a_small_result_and_its_job_survive_a_restart(tmp_path: Path) -> None:
    with LocalCloud(home=tmp_path) as cloud:
        client = cloud.context().bigquery_client()
        job = client.query("SELECT 1 AS x, 'a' AS s UNION ALL SELECT 2, 'b' ORDER BY x")
        assert [tuple(row) for row in job.result()] == [(1, "a"), (2, "b")]
    with LocalCloud(home=tmp_path) as cloud:
        client = cloud.context().bigquery_client()
        assert client.get_job(job.job_id).state == "DONE"
        assert job.job_id in {j.job_id for j in client.list_jobs()}
        rows = client.list_rows(job.destination)
        assert [tuple(row) for row in rows] == [(1, "a"), (2, "b")]
        assert [f.field_type for f in client.get_table(job.destination).schema] == [
            "INTEGER",
            "STRING",
        ]


def test_a_query_reads_the_anonymous_table_of_a_small_result(tmp_path: Path) -> None:
    with LocalCloud(home=tmp_path) as cloud:
        client = cloud.context().bigquery_client()
        job = client.query("SELECT 1 AS x, 1 AS x2, [1, 2] AS a, STRUCT(1 AS f) AS s")
        job.result()
        table = (
            f"`{job.destination.project}.{job.destination.dataset_id}.{job.destination.table_id}`"
        )
        rows = client.query_and_wait(f"SELECT x + 1 AS y, a[OFFSET(1)] AS b, s.f FROM {table}")
        assert [tuple(row) for row in rows] == [(2, 2, 1)]
        assert client.get_table(job.destination).num_rows == 1


def test_a_large_result_is_written_as_its_table(tmp_path: Path) -> None:
    with LocalCloud(home=tmp_path) as cloud:
        client = cloud.context().bigquery_client()
        rows = client.query_and_wait("SELECT x FROM UNNEST(GENERATE_ARRAY(1, 5000)) AS x")
        assert rows.total_rows == 5000
        assert sum(row.x for row in rows) == 5000 * 5001 // 2


def test_an_array_with_a_null_element_is_refused_as_before(tmp_path: Path) -> None:
    with LocalCloud(home=tmp_path) as cloud:
        client = cloud.context().bigquery_client()
        with pytest.raises(exceptions.BadRequest, match="Array cannot have a null element"):
            client.query_and_wait("SELECT [1, NULL] AS a")
