"""What a tabular dataset points at: a BigQuery table of the local warehouse, or CSV objects
of the local Cloud Storage. Read in-process (no client round trip): the export of a training
pipeline's splits and the checks before a dataset is created."""

from __future__ import annotations

import fnmatch
import io
from typing import TYPE_CHECKING, Any

from vertexkit.local.bigquery.query_error import QueryError
from vertexkit.local.bigquery.table_name import TableName
from vertexkit.local.errors import ApiError, bad_request
from vertexkit.local.vertex.backend import VertexBackend
from vertexkit.local.vertex.store import Resource
from vertexkit.specs.datasets import INPUT

if TYPE_CHECKING:  # pandas loads when a dataset is read: the local cloud starts without it
    import pandas as pd


def input_config(dataset: Resource) -> dict[str, Any]:
    return dataset["metadata"]["inputConfig"]


def table_name(uri: str) -> TableName:
    project, dataset, table = uri.removeprefix("bq://").split(".", 2)
    return TableName(project, dataset, table)


def csv_objects(backend: VertexBackend, uris: list[str]) -> list[tuple[str, str]]:
    """(bucket, name) of every object the URIs name; a `*` matches as Vertex's wildcards do."""
    found: list[tuple[str, str]] = []
    for index, uri in enumerate(uris):
        bucket, _, name = uri.removeprefix("gs://").partition("/")
        if "*" in name:
            prefix = name.split("*", 1)[0]
            names = [
                n for n in backend.storage.list_objects(bucket, prefix) if fnmatch.fnmatch(n, name)
            ]
        else:
            names = [name] if backend.storage.stat_object(bucket, name) is not None else []
        if not names:
            raise bad_request(f"{INPUT}.gcsSource.uri[{index}]: no object matches {uri!r}.")
        found.extend((bucket, n) for n in sorted(names))
    return found


def columns(backend: VertexBackend, dataset: Resource) -> list[str]:
    """The dataset's column names; raises a 400 naming the source when it cannot be read."""
    config = input_config(dataset)
    if "bigquerySource" in config:
        uri = config["bigquerySource"]["uri"]
        warehouse = backend.cloud.warehouse()
        cur = warehouse.cursor()
        try:
            warehouse.require_table(cur, table_name(uri))
            return [field["name"] for field in warehouse.table_schema(cur, table_name(uri))]
        except QueryError as exc:
            raise bad_request(f"{INPUT}.bigquerySource.uri: {exc}") from exc
        finally:
            cur.close()
    import pandas as pd

    bucket, name = csv_objects(backend, config["gcsSource"]["uri"])[0]
    header = pd.read_csv(io.BytesIO(backend.storage.read_object(bucket, name)), nrows=0)
    return list(header.columns)


def read_frame(backend: VertexBackend, dataset: Resource) -> pd.DataFrame:
    """Every row of the dataset's source, in the source's order."""
    import pandas as pd

    config = input_config(dataset)
    if "bigquerySource" in config:
        cur = backend.cloud.warehouse().cursor()
        try:
            return cur.execute(
                f"SELECT * FROM {table_name(config['bigquerySource']['uri']).sql}"
            ).df()
        finally:
            cur.close()
    frames = [
        pd.read_csv(io.BytesIO(backend.storage.read_object(bucket, name)))
        for bucket, name in csv_objects(backend, config["gcsSource"]["uri"])
    ]
    return pd.concat(frames, ignore_index=True)


def check_readable(backend: VertexBackend, dataset: Resource) -> None:
    """Vertex refuses a dataset whose source it cannot read: a missing table or object."""
    import pandas as pd

    try:
        if not columns(backend, dataset):
            raise bad_request(f"{INPUT}: the source has no columns.")
    except ApiError:
        raise
    except (ValueError, pd.errors.ParserError) as exc:
        raise bad_request(f"{INPUT}.gcsSource.uri: not a readable CSV file ({exc}).") from exc
