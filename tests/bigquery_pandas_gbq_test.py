"""pandas-gbq on the local cloud, as a user's process started by the cloud runs it (the client
hook: `vertexkit/local/hooks`): `read_gbq(..., use_bqstorage_api=True)` of a query and of a
table takes the Storage Read API (a read session is created for the table, no fallback
warning), and
`to_gbq` writes a table. pandas-gbq's reference: read_gbq's use_bqstorage_api "use the
BigQuery Storage API to download query results quickly"; to_gbq creates the table when absent.
"""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
from google.cloud import bigquery

from vertexkit.local.process_env import process_env, with_client_hook

SCRIPT = Path(__file__).parent / "pandas_gbq" / "read_and_write.py"


@pytest.fixture
def dataset(local_cloud: Any) -> Any:
    client: bigquery.Client = local_cloud.context().bigquery_client()
    name = f"pgbq_{uuid.uuid4().hex[:8]}"
    client.create_dataset(name)
    yield client, name
    client.delete_dataset(name, delete_contents=True)


def test_read_gbq_takes_the_storage_read_api_and_to_gbq_writes(
    local_cloud: Any, dataset: Any
) -> None:
    client, name = dataset
    env = with_client_hook(process_env(local_cloud.env()))
    done = subprocess.run(
        [sys.executable, str(SCRIPT), client.project, name],
        env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["query"] == [4, {"x": [1, 2, 3, 4], "s": ["1", "2", "3", "4"]}]
    assert seen["table"] == {"id": [1, 2, 3], "name": ["a", "b", "c"]}
    # The table's read takes a read session. The query's rows all come in jobs.query's first
    # page, and google-cloud-bigquery then reads no further (its _should_use_bqstorage), as
    # it does against Google: no session for it.
    assert len(seen["sessions"]) == 1
    assert seen["sessions"][0].endswith(f"/datasets/{name}/tables/people")
    assert client.get_table(f"{name}.people").num_rows == 3
