"""One batch prediction job's run, in the executor's thread for the job.

Rows are read (gs:// JSONL/CSV, or a BigQuery table) and shaped per `instanceConfig`; the rows
are split in contiguous shards over `dedicatedResources.startingReplicaCount` replicas, each a
worker process (see worker.py) started through the backend's ProcessGroups, so cancel and a
restart end them. A custom serving container runs once per replica, as the endpoints run it.
Results are written in Vertex's layout; rows that fail go to the errors output.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import Any

from vertexkit.local.process_env import process_env
from vertexkit.local.processes import Group
from vertexkit.local.vertex.batch_prediction import data
from vertexkit.local.vertex.batch_prediction.instances import (
    BadLine,
    InstanceConfig,
    RowError,
    Shaped,
    shape,
)
from vertexkit.local.vertex.core import fields
from vertexkit.local.vertex.jobs import states as jobs
from vertexkit.local.vertex.jobs.lifecycle import JobControl, JobLog, Outcome
from vertexkit.local.vertex.registry.serving import ContainerServer, prebuilt_framework
from vertexkit.local.vertex.store import Resource
from vertexkit.local.vertex.training.execution import Executor
from vertexkit.runtime.prebuilt import ServingError
from vertexkit.specs.serving import container_notes

WORKER = "vertexkit.local.vertex.batch_prediction.worker"
DEFAULT_BATCH_SIZE = 64  # Vertex's default manualBatchTuningParameters.batchSize
POLL_SECONDS = 0.05
STOP_GRACE_SECONDS = 5.0


@dataclass
class Entry:
    """One input row: shaped for the model, or refused before it (`error`); then its result."""

    raw: Any
    shaped: Shaped | None = None
    error: str = ""
    result: dict[str, Any] | None = None

    @property
    def failed(self) -> bool:
        return self.shaped is None or self.result is None or "error" in self.result


class ReplicaFailed(RuntimeError):
    pass


def timestamp(rfc3339: str) -> str:
    """2026-11-30T19:18:59.381699Z -> 2026_11_30T19_18_59_381Z, the form Vertex names outputs."""
    day, _, rest = rfc3339.partition("T")
    clock, _, fraction = rest.rstrip("Z").partition(".")
    return f"{day.replace('-', '_')}T{clock.replace(':', '_')}_{(fraction + '000')[:3]}Z"


def shard_bounds(count: int, shards: int) -> list[tuple[int, int]]:
    return [(count * k // shards, count * (k + 1) // shards) for k in range(shards)]


class BatchRun:
    def __init__(
        self, executor: Executor, job: Resource, version: Resource, control: JobControl
    ) -> None:
        self.executor = executor
        self.backend = executor.backend
        self.job = job
        self.name = job["name"]
        self.version = version
        self.control = control
        self.work_dir = self.backend.home / "batch_prediction" / self.name.rsplit("/", 1)[1]
        self.log = JobLog(self.work_dir)
        self.servers: list[ContainerServer] = []

    def run(self) -> None:
        try:
            outcome = self._run()
        except (data.InputError, ServingError, ReplicaFailed) as exc:
            outcome = Outcome(jobs.FAILED, jobs.CODE_INVALID_ARGUMENT, str(exc))
        except Exception as exc:  # a bug must end the job, never leave it RUNNING
            outcome = Outcome(jobs.FAILED, jobs.CODE_INTERNAL, f"internal: {exc!r}")
        finally:
            for server in self.servers:
                server.stop()
        self.log(f"job ended {outcome.state}")
        self.executor.finish(self.name, outcome)

    def _run(self) -> Outcome:
        for line in fields.notes(self.job, fields.BATCH_NOTES, "batchPredictionJob"):
            self.log(line)
        self.executor.set_state(self.name, jobs.PENDING)
        entries = self.prepare(self.read_rows())
        self.executor.set_state(self.name, jobs.RUNNING)
        replicas = self.replica_count(len(entries))
        if self.control.stop.is_set() or not self.predict(entries, replicas):
            return self.control.outcome()
        self.write_outputs(entries, replicas)
        return Outcome(jobs.SUCCEEDED)

    # -- input ---------------------------------------------------------------------------------
    def read_rows(self) -> list[Any]:
        config = self.job["inputConfig"]
        if config["instancesFormat"] == "bigquery":
            client = self.backend.cloud.context().bigquery_client()
            return data.bq_rows(client, config["bigquerySource"]["inputUri"])
        uris = list(config["gcsSource"]["uris"])
        return data.gcs_rows(self.backend.storage, uris, config["instancesFormat"])

    def prepare(self, rows: list[Any]) -> list[Entry]:
        config = InstanceConfig.from_api(self.job.get("instanceConfig") or {})
        input_format = self.job["inputConfig"]["instancesFormat"]
        entries = []
        for row in rows:
            if isinstance(row, BadLine):
                entries.append(Entry(row.text, error=row.message))
                continue
            try:
                entries.append(Entry(row, shaped=shape(row, config, input_format)))
            except RowError as exc:
                entries.append(Entry(row, error=str(exc)))
        return entries

    def replica_count(self, rows: int) -> int:
        resources = self.job.get("dedicatedResources") or {}
        accelerator = (resources.get("machineSpec") or {}).get("acceleratorType")
        if accelerator:
            self.log(f"{accelerator} requested: the replicas predict on this machine's CPU.")
        asked = int(resources.get("startingReplicaCount") or 0)
        asked = asked or int(resources.get("maxReplicaCount") or 0) or 1
        return max(1, min(asked, rows))

    # -- prediction ----------------------------------------------------------------------------
    def predict(self, entries: list[Entry], replicas: int) -> bool:
        """Runs the replicas to the end; False when the job was stopped meanwhile."""
        predictors = self.predictor_specs(replicas)
        groups = [
            self.start_replica(k, entries[start:end], predictors[k])
            for k, (start, end) in enumerate(shard_bounds(len(entries), replicas))
        ]
        if not self.wait(groups):
            return False
        for k, (start, end) in enumerate(shard_bounds(len(entries), replicas)):
            self.collect(k, entries[start:end])
        return True

    def predictor_specs(self, replicas: int) -> list[dict[str, Any]]:
        spec = self.version.get("containerSpec") or {}
        artifact = self.version.get("artifactUri", "")
        prebuilt = prebuilt_framework(spec.get("imageUri", "")) is not None
        for note in container_notes(spec, prebuilt):
            self.log(note)
        if prebuilt:
            model_dir = self.backend.storage.gs_uri_to_path(artifact)
            prebuilt = {"kind": "prebuilt", "image": spec["imageUri"],
                        "modelDir": str(model_dir), "artifactUri": artifact}  # fmt: skip
            self.log(f"prebuilt image {spec['imageUri']}: the model is loaded in each replica")
            return [prebuilt] * replicas
        return [self.start_container(k) for k in range(replicas)]

    def start_container(self, replica: int) -> dict[str, Any]:
        spec = self.version.get("containerSpec") or {}
        if replica and spec.get("ports"):
            # Replicas share 127.0.0.1, so only the first can listen on the declared port.
            self.log(f"replica {replica}: containerSpec.ports[0] is replica 0's; a free port")
        server = ContainerServer(
            spec,
            self.container_env(replica),
            self.work_dir / f"container-{replica}.log",
            groups=self.backend.processes,
            use_declared_port=replica == 0,
        )
        self.servers.append(server)
        server.start()
        return {"kind": "container", "url": server.url + server.predict_route}

    def container_env(self, replica: int) -> dict[str, str]:
        """What Vertex gives a serving container, as the endpoints give it."""
        spec = self.version.get("containerSpec") or {}
        job_id = self.name.rsplit("/", 1)[1]
        route = f"/v1/endpoints/{job_id}/deployedModels/{job_id}-{replica}"
        machine = (self.job.get("dedicatedResources") or {}).get("machineSpec") or {}
        env = {
            **self.backend.cloud.env(),
            **{item["name"]: item.get("value", "") for item in spec.get("env") or []},
            "SERVING_BIND_HOST": "127.0.0.1",  # not Vertex's: keeps the server off the LAN
            "AIP_MODE": "PREDICTION",
            "AIP_MODE_VERSION": "1.0.0",
            "AIP_FRAMEWORK": "CUSTOM_CONTAINER",
            "AIP_MACHINE_TYPE": machine.get("machineType", ""),
            "AIP_PREDICT_ROUTE": spec.get("predictRoute") or route + ":predict",
            "AIP_HEALTH_ROUTE": spec.get("healthRoute") or route,
        }
        if self.version.get("artifactUri"):
            env["AIP_STORAGE_URI"] = env["AIP_MODEL_DIR"] = self.version["artifactUri"]
        return env

    def start_replica(self, replica: int, shard: list[Entry], predictor: dict[str, Any]) -> Group:
        self.work_dir.mkdir(parents=True, exist_ok=True)
        shard_path = self.work_dir / f"shard-{replica}.jsonl"
        with shard_path.open("w") as out:
            for index, entry in enumerate(shard):
                if entry.shaped is not None:
                    out.write(json.dumps({"i": index, "instance": entry.shaped.instance}) + "\n")
        task = {
            "shard": str(shard_path),
            "output": str(self.work_dir / f"results-{replica}.jsonl"),
            "batchSize": self.batch_size(),
            "parameters": self.job.get("modelParameters"),
            "predictor": predictor,
            "explanationSpec": self.explanation_spec(),
        }
        task_path = self.work_dir / f"task-{replica}.json"
        task_path.write_text(json.dumps(task))
        log_path = self.work_dir / f"replica-{replica}.log"
        with log_path.open("ab") as log:
            return self.backend.processes.spawn(
                [sys.executable, "-m", WORKER, str(task_path)], str(log_path),
                env=process_env(self.backend.cloud.env()), stdout=log, stderr=subprocess.STDOUT,
            )  # fmt: skip

    def explanation_spec(self) -> dict[str, Any] | None:
        """With generateExplanation: the job's explanationSpec over its Model's, as the create
        request checked it (routes.check_explanation); None without."""
        if not self.job.get("generateExplanation"):
            return None
        from vertexkit.local.vertex.registry.explain import merged_spec

        base = self.version.get("explanationSpec") or {}
        return merged_spec(base, self.job.get("explanationSpec") or {})

    def batch_size(self) -> int:
        tuning = self.job.get("manualBatchTuningParameters") or {}
        return int(tuning.get("batchSize") or 0) or DEFAULT_BATCH_SIZE

    def wait(self, groups: list[Group]) -> bool:
        while not self.control.stop.is_set():
            codes = [group.returncode() for group in groups]
            if all(code is not None for code in codes):
                break
            time.sleep(POLL_SECONDS)
        else:
            for group in groups:
                group.end(STOP_GRACE_SECONDS)
            return False
        for replica, group in enumerate(groups):
            code = group.end(0)
            if code != 0:
                raise ReplicaFailed(self.replica_failure(replica, code))
        return True

    def replica_failure(self, replica: int, code: int) -> str:
        log = (self.work_dir / f"replica-{replica}.log").read_text(errors="replace")
        tail = log.strip().splitlines()[-1:] or ["no output"]
        return f"replica {replica} exited with code {code}: {tail[0]}"

    def collect(self, replica: int, shard: list[Entry]) -> None:
        with (self.work_dir / f"results-{replica}.jsonl").open() as lines:
            for line in lines:
                result = json.loads(line)
                shard[result.pop("i")].result = result

    # -- output --------------------------------------------------------------------------------
    def write_outputs(self, entries: list[Entry], replicas: int) -> None:
        stamp = timestamp(self.job["createTime"])
        output = self.job["outputConfig"]
        if output["predictionsFormat"] == "bigquery":
            info = self.write_bigquery(entries, output["bigqueryDestination"]["outputUri"], stamp)
        else:
            prefix = output["gcsDestination"]["outputUriPrefix"]
            info = self.write_gcs(entries, replicas, prefix, stamp)
        failed = sum(entry.failed for entry in entries)
        stats = {"successfulCount": str(len(entries) - failed), "failedCount": str(failed),
                 "incompleteCount": "0"}  # fmt: skip

        def record(job: Resource) -> None:
            job["outputInfo"] = info
            job["completionStats"] = stats

        self.backend.store.mutate(self.name, record)

    def model_display_name(self) -> str:
        return self.version.get("displayName") or self.version["name"].rsplit("/", 1)[1]

    def write_gcs(
        self, entries: list[Entry], replicas: int, prefix: str, stamp: str
    ) -> dict[str, str]:
        directory = f"{prefix.rstrip('/')}/prediction-{self.model_display_name()}-{stamp}"
        for k, (start, end) in enumerate(shard_bounds(len(entries), replicas)):
            shard = entries[start:end]
            suffix = f"{k:05d}-of-{replicas:05d}"
            data.write_jsonl(self.backend.storage, f"{directory}/prediction.results-{suffix}",
                             (result_line(e) for e in shard if not e.failed))  # fmt: skip
            data.write_jsonl(self.backend.storage, f"{directory}/prediction.errors_stats-{suffix}",
                             (error_line(e) for e in shard if e.failed))  # fmt: skip
        return {"gcsOutputDirectory": directory}

    def write_bigquery(self, entries: list[Entry], uri: str, stamp: str) -> dict[str, str]:
        target = data.bq_target(uri, self.model_display_name(), stamp)
        client = self.backend.cloud.context().bigquery_client()
        data.ensure_dataset(client, target)
        dataset = f"{target.project}.{target.dataset}"
        predictions = [bq_prediction_row(e) for e in entries if not e.failed]
        data.write_bq_table(client, f"{dataset}.{target.predictions}", predictions, "prediction")
        errors = [bq_error_row(e) for e in entries if e.failed]
        data.write_bq_table(client, f"{dataset}.{target.errors}", errors, "errors")
        return {
            "bigqueryOutputDataset": f"bq://{dataset}",
            "bigqueryOutputTable": target.predictions,
        }


# -- output rows -------------------------------------------------------------------------------
def result_line(entry: Entry) -> dict[str, Any]:
    """Vertex's jsonl line; with generateExplanation "an additional entry keyed explanation
    ... a JSON object that conforms to the Explanation object" (BatchPredictionJob)."""
    assert entry.shaped is not None and entry.result is not None
    if entry.shaped.key is not None:
        line = {"key": entry.shaped.key, "prediction": entry.result["prediction"]}
    else:
        line = {"instance": entry.shaped.instance, "prediction": entry.result["prediction"]}
    if "explanation" in entry.result:
        line["explanation"] = entry.result["explanation"]
    return line


def entry_error(entry: Entry) -> dict[str, Any]:
    if entry.result is not None and "error" in entry.result:
        return entry.result["error"]
    return {"status": "INVALID_ARGUMENT", "message": entry.error or "no prediction"}


def error_line(entry: Entry) -> dict[str, Any]:
    instance = entry.shaped.instance if entry.shaped is not None else entry.raw
    return {"instance": instance, "error": entry_error(entry)}


def row_columns(entry: Entry) -> dict[str, Any]:
    if entry.shaped is not None and entry.shaped.columns is not None:
        return dict(entry.shaped.columns)
    if isinstance(entry.raw, dict):
        return dict(entry.raw)
    return {"instance": entry.raw}


def bq_prediction_row(entry: Entry) -> dict[str, Any]:
    assert entry.shaped is not None and entry.result is not None
    if entry.shaped.key is not None:
        return {"key": entry.shaped.key, "prediction": entry.result["prediction"]}
    return {**row_columns(entry), "prediction": entry.result["prediction"]}


def bq_error_row(entry: Entry) -> dict[str, Any]:
    error = {"code": 3, "message": entry_error(entry)["message"]}  # 3: INVALID_ARGUMENT
    return {**row_columns(entry), "errors": error}
