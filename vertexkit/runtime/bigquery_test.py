"""The BigQuery runtime's round trips against the local cloud: a job BigQuery answers DONE at
insert is not polled, a staging table's expiry PATCH also counts its rows, and a failed job still
fails with BigQuery's own message, recorded in gcp_resources, having written nothing."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from google.cloud import bigquery as bq

from vertexkit.context import CloudContext
from vertexkit.runtime import bigquery
from vertexkit.runtime.gcp_resources import read_gcp_resources

PENGUINS = "bigquery-public-data.ml_datasets.penguins"
BUCKET = "runtime-bigquery-test"
STAGING = "runtime_bigquery_test_staging"


@pytest.fixture(scope="module")
def bucket(local_cloud: Any) -> str:
    client = local_cloud.context().storage_client()
    if not client.bucket(BUCKET).exists():
        client.create_bucket(BUCKET)
    return BUCKET


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Counts the client's jobs.get and tables.get calls. A spy, not a fake: each call still
    goes to the local cloud; only the count is taken."""
    counted = {"get_job": 0, "get_table": 0}
    for name in counted:
        real = getattr(bq.Client, name)

        def spy(
            self: bq.Client, *args: Any, _name: str = name, _real: Any = real, **kw: Any
        ) -> Any:
            counted[_name] += 1
            return _real(self, *args, **kw)

        monkeypatch.setattr(bq.Client, name, spy)
    return counted


def test_export_polls_no_job_done_at_insert_and_counts_rows_from_the_expiry(
    cloud_context: CloudContext, bucket: str, tmp_path: Path, calls: dict[str, int]
) -> None:
    before = dt.datetime.now(dt.timezone.utc)
    result = bigquery.export_dataset(
        cloud_context,
        f"gs://{bucket}/penguins",
        source_table=PENGUINS,
        staging_dataset=STAGING,
        gcp_resources_path=str(tmp_path / "gcp_resources"),
    )
    assert len(read_gcp_resources(str(tmp_path / "gcp_resources"))) == 6
    # The local BigQuery answers every insert DONE: no job is polled, no table read again.
    assert calls == {"get_job": 0, "get_table": 0}

    client = cloud_context.bigquery_client()
    staged = {t.table_id.rsplit("_", 1)[1]: t for t in client.list_tables(STAGING)}
    assert set(staged) == {"train", "validation", "test"}
    total = client.get_table(PENGUINS).num_rows
    assert sum(split.rows for split in result.splits.values()) == total
    for name, split in result.splits.items():
        table = client.get_table(staged[name].reference)
        assert split.rows == table.num_rows > 0
        expires_in = table.expires - before
        assert dt.timedelta(hours=23, minutes=55) < expires_in < dt.timedelta(days=1, minutes=5)


def test_query_job_done_at_insert_is_not_polled(
    cloud_context: CloudContext, tmp_path: Path, calls: dict[str, int]
) -> None:
    result = bigquery.run_query_job(
        cloud_context,
        f"SELECT species FROM `{PENGUINS}` WHERE body_mass_g > @mass",
        params={"mass": 5000},
        gcp_resources_path=str(tmp_path / "gcp_resources"),
    )
    assert result.rows > 0
    assert calls == {"get_job": 0, "get_table": 1}  # the result table's row count


def test_a_resumed_job_is_fetched_once_not_polled(
    cloud_context: CloudContext, tmp_path: Path, calls: dict[str, int]
) -> None:
    path = str(tmp_path / "gcp_resources")
    first = bigquery.run_query_job(cloud_context, "SELECT 1 AS one", gcp_resources_path=path)
    again = bigquery.run_query_job(cloud_context, "SELECT 1 AS one", gcp_resources_path=path)
    assert again.job_id == first.job_id
    assert calls["get_job"] == 1  # the resume's own fetch of the recorded job


FAILURES: list[tuple[str, Callable[[CloudContext, str, str], Any], str]] = [
    (
        "query-missing-table",
        lambda ctx, prefix, path: bigquery.run_query_job(
            ctx, "SELECT * FROM `local-project.nope.missing`", gcp_resources_path=path
        ),
        "Not found: Dataset local-project:nope was not found in location US",
    ),
    (
        "query-division-by-zero",
        lambda ctx, prefix, path: bigquery.run_query_job(
            ctx, "SELECT 1/0 AS x", gcp_resources_path=path
        ),
        "division by zero",
    ),
    (
        "export-error-in-source",
        lambda ctx, prefix, path: bigquery.export_dataset(
            ctx, prefix, query="SELECT ERROR('boom') AS x", gcp_resources_path=path
        ),
        "failed: boom",
    ),
]


@pytest.mark.parametrize(
    ("run", "message"), [f[1:] for f in FAILURES], ids=[f[0] for f in FAILURES]
)
def test_a_job_failed_at_insert_fails_with_bigquerys_message(
    cloud_context: CloudContext,
    bucket: str,
    tmp_path: Path,
    run: Callable[[CloudContext, str, str], Any],
    message: str,
) -> None:
    path = str(tmp_path / "gcp_resources")
    prefix = f"gs://{bucket}/failed-{tmp_path.name}"
    with pytest.raises(bigquery.BigQueryJobError, match=r"BigQuery job \S+ failed: ") as raised:
        run(cloud_context, prefix, path)
    assert message in str(raised.value)
    [recorded] = read_gcp_resources(path)  # the failed job, and nothing after it
    assert recorded.resource_uri.endswith(f"/jobs/{raised.value.args[0].split()[2]}?location=US")
    prefix_path = prefix.removeprefix(f"gs://{bucket}/")
    assert not list(cloud_context.storage_client().list_blobs(bucket, prefix=prefix_path))
