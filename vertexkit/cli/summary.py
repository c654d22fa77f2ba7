"""What `vertexkit run` prints at the end: the model version, its metrics, the comparison's
decision, the endpoint and a sample prediction.

Everything comes from the finished PipelineJob (its task details, resolved to the pipeline's
outputs by `vertexkit.pipeline_jobs.pipeline_outputs`), so it reads the same for every pipeline
and for a job on Vertex AI. The endpoint is found by its display name and asked for a prediction
over Vertex AI's REST API (`vertexkit/vertex_rest.py`), with the same requests and the same
reading of the answer as `aiplatform.Endpoint.list(...)[-1].predict(...)`: the SDK would cost
about 2 s of CPU to import for three calls, and even the three `aiplatform_v1` clients 0.2 s,
on the cores the run's local cloud and its model server are starting on.
"""

from __future__ import annotations

import fnmatch
import io
import json
import math
from typing import Any

from rich.console import Console
from rich.table import Table

from vertexkit.runner import FinishedRun
from vertexkit.runtime.gcs_io import split_gs_uri
from vertexkit.storage_rest import StorageRest
from vertexkit.vertex_rest import ServiceRefused, VertexRest, as_proto_value


def summarize(console: Console, run: FinishedRun) -> None:
    """Prints the run's summary; called while the local cloud still serves the endpoint."""
    outputs = run.outputs
    job_id = run.job.get("name", "").rsplit("/", 1)[-1]
    title = f"{run.name}: {job_id} finished in {run.seconds:.1f} s"
    table = Table(title=title, show_header=False)
    table.add_column("what", style="bold")
    table.add_column("value", overflow="fold")  # resource names must stay whole to be copied
    model = outputs.get("model")
    record = outputs.get("record")  # the retraining pipeline's decision row (JSON)
    if model is not None:
        table.add_row("model version", model.get("metadata", {}).get("resourceName", model["uri"]))
    elif isinstance(record, dict) and record.get("challenger_version"):
        table.add_row("model version", record["challenger_version"])
    metrics = outputs.get("metrics")
    if metrics is not None:
        shown = {
            key: value
            for key, value in metrics.get("metadata", {}).items()
            if isinstance(value, (int, float)) and not isinstance(value, bool)
        }
        table.add_row("metrics", ", ".join(f"{k}={v:.4g}" for k, v in sorted(shown.items())))
    if "decision" in outputs:
        table.add_row("decision", f"{_verdict(outputs)}: {outputs['decision']}")
    table.add_row("artifacts", f"{run.pipeline_root}/")
    if run.params.get("endpoint_display_name"):  # a pipeline that deploys: ask Vertex AI
        _add_endpoint_rows(table, run, VertexRest.for_context(run.context))
    console.print(table)


def _add_endpoint_rows(table: Table, run: FinishedRun, vertex: VertexRest) -> None:
    """The endpoint the run deployed to, and a sample prediction from it."""
    endpoint = _endpoint(run, vertex)
    if endpoint is None:
        return
    table.add_row("endpoint", endpoint["name"])
    instance, prediction = _sample_prediction(run, vertex, endpoint)
    if instance is not None:
        table.add_row("sample instance", json.dumps(instance, default=str))
        table.add_row("prediction", json.dumps(prediction, default=str))


def _verdict(outputs: dict[str, Any]) -> str:
    """promoted, kept the champion, or skipped (a retraining run that did not retrain)."""
    if outputs.get("retrained") is False:
        return "skipped"
    return "promoted" if outputs.get("promoted") else "kept the champion"


def _endpoint(run: FinishedRun, vertex: VertexRest) -> dict[str, Any] | None:
    """The last public endpoint with the run's display name, as `aiplatform.Endpoint.list`
    lists them (endpoints on a private network or Private Service Connect left out)."""
    name = run.params.get("endpoint_display_name")
    if not name:
        return None
    listed = vertex.list(
        f"{run.context.parent}/endpoints", "endpoints", {"filter": f'display_name="{name}"'}
    )
    private = ("network", "privateServiceConnectConfig")
    public = [e for e in listed if not any(e.get(key) for key in private)]
    return public[-1] if public else None


def _sample_prediction(
    run: FinishedRun, vertex: VertexRest, endpoint: dict[str, Any]
) -> tuple[list | None, Any]:
    """An instance of the deployed model sent to the endpoint: the `sample_instance` its trainer
    wrote into `model_metadata.json` (vertexkit's trainers do), else the first test row in the
    model's feature order."""
    deployed = endpoint.get("deployedModels") or []
    if not deployed:
        return None, None
    model_dir = _model_dir(vertex, deployed[0])
    storage = StorageRest.for_context(run.context)  # one credential lookup against Google
    instance = _written_sample(storage, model_dir) or _first_test_row(run, storage, model_dir)
    if instance is None:
        return None, None
    return instance, _predict(vertex, endpoint["name"], instance)


def _written_sample(storage: StorageRest, model_dir: str) -> list | None:
    """`sample_instance` of the model's `model_metadata.json`, when it has one."""
    try:
        metadata = json.loads(_read_text(storage, f"{model_dir}/model_metadata.json"))
    except ServiceRefused as refused:  # 404: a trainer of the user's own that wrote none
        if refused.code != 404:
            raise
        return None
    except ValueError:  # not JSON
        return None
    sample = metadata.get("sample_instance") if isinstance(metadata, dict) else None
    return sample if isinstance(sample, list) else None


def _first_test_row(run: FinishedRun, storage: StorageRest, model_dir: str) -> list | None:
    """The pipeline's first test row, in the order of the model's `feature_columns.json`."""
    import pyarrow.parquet as pq  # only for a model whose trainer wrote no sample (0.2 s)

    test_data = run.outputs.get("test_data")
    if test_data is None:
        return None
    columns = json.loads(_read_text(storage, f"{model_dir}/feature_columns.json"))
    shard = _first_shard(storage, test_data["uri"])  # the export writes `data-*.parquet` shards
    # The first row only: `pq.read_table` would import pyarrow.dataset and pandas (0.2 s).
    first = shard and next(pq.ParquetFile(io.BytesIO(shard)).iter_batches(batch_size=1), None)
    if not first:
        return None
    row = first.to_pylist()[0]
    return [_instance_value(row[column]) for column in columns]


def _instance_value(value: Any) -> Any:
    """A Parquet value as a JSON instance holds it: a null or a NaN is null."""
    return None if isinstance(value, float) and math.isnan(value) else value


def _predict(vertex: VertexRest, endpoint_name: str, instance: list) -> Any:
    """`Endpoint.predict`: the instance must be JSON; the first prediction read as the SDK reads
    a protobuf Value (every number a double)."""
    body = {"instances": [instance]}
    json.dumps(body)  # the SDK's own check: a TypeError names the value
    answer = vertex.post(f"{endpoint_name}:predict", body)
    return as_proto_value(answer["predictions"][0])


def _model_dir(vertex: VertexRest, deployed_model: dict[str, Any]) -> str:
    version = f"{deployed_model['model']}@{deployed_model['modelVersionId']}"
    return vertex.get(version)["artifactUri"].rstrip("/")


def _first_shard(storage: StorageRest, pattern: str) -> bytes | None:
    """The first object matching `gs://BUCKET/DIR/data-*.parquet` (a `*` within one name, as
    a glob matches), or None."""
    bucket, glob = split_gs_uri(pattern)
    prefix = glob.split("*", 1)[0]
    names = sorted(
        name
        for name in storage.names(bucket, prefix)
        if fnmatch.fnmatchcase(name, glob) and "/" not in name[len(prefix) :]
    )
    return storage.read(bucket, names[0]) if names else None


def _read_text(storage: StorageRest, uri: str) -> str:
    bucket, name = split_gs_uri(uri)
    return storage.read(bucket, name).decode()


def summarize_kfp(console: Console, run: Any, params: dict[str, Any]) -> None:
    """`vertexkit run --kfp-host`'s summary: what the KFP API gives (the run, its tasks, its
    pipeline root) and, where the environment names a Vertex AI project (`CloudContext.from_env`:
    Google's, or the local cloud's exports), the model and endpoint the pipeline's parameters
    name, read from the Model Registry and the endpoints there. The KFP API answers artifact IDs
    only, never their values, so the metrics, the decision and a sample prediction that a local
    or a Vertex run shows are not in this summary."""
    from vertexkit.context import CloudContext

    body = run.run
    title = f"{run.name}: {body.get('run_id', '')} finished in {run.seconds:.1f} s"
    table = Table(title=title, show_header=False)
    table.add_column("what", style="bold")
    table.add_column("value", overflow="fold")
    table.add_row("run", f"{run.host.rstrip('/')}/#/runs/details/{body.get('run_id', '')}")
    table.add_row("pipeline version", f"{run.pipeline_id} / {run.version_id}")
    tasks = (body.get("run_details") or {}).get("task_details") or []
    counts: dict[str, int] = {}
    for task in tasks:
        if task.get("parent_task_id"):  # the pipeline's root DAG is the run itself
            counts[task.get("state", "?")] = counts.get(task.get("state", "?"), 0) + 1
    table.add_row("tasks", ", ".join(f"{n} {state.lower()}" for state, n in sorted(counts.items())))
    root = (body.get("runtime_config") or {}).get("pipeline_root")
    if root:
        table.add_row("pipeline root", f"{root.rstrip('/')}/")
    try:
        context = CloudContext.from_env(params.get("project"), params.get("location"))
    except ValueError:
        context = None
    if context is not None:
        model = _latest_model(context, params.get("model_display_name"))
        if model is not None:
            table.add_row("model version", f"{model.name}@{model.version_id}")
        name = params.get("endpoint_display_name")
        if name:
            listed = context.endpoint_client().list_endpoints(
                request={"parent": context.parent, "filter": f'display_name="{name}"'}
            )
            public = [e for e in listed if not e.network and not e.private_service_connect_config]
            if public:
                table.add_row("endpoint", public[-1].name)
    console.print(table)


def _latest_model(context: Any, display_name: str | None) -> Any | None:
    if not display_name:
        return None
    listed = context.model_client().list_models(
        request={"parent": context.parent, "filter": f'display_name="{display_name}"'}
    )
    models = sorted(listed, key=lambda m: m.version_update_time or m.update_time)
    return models[-1] if models else None
