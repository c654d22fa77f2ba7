"""What each field of a CustomJobSpec means on the local cloud: the one table.

Every field a job may carry (a CustomJob's `jobSpec`, a tuning job's `trialJobSpec`, a custom
training pipeline's `trainingTaskInputs`) is one of:

- honoured: workerPoolSpecs (replicas as local processes, runner.py), containerSpec and
  pythonPackageSpec with their env, baseOutputDirectory (the AIP_* directories),
  scheduling.timeout, scheduling.restartJobOnWorkerRestart, scheduling.disableRetries (it turns
  restarts off, as the reference says), persistentResourceId (persistent_resources/jobs.py),
  tensorboard (its event files are listed under the TensorBoard, tensorboards/routes.py),
  experiment and experimentRun (checked to exist; the job is recorded on the run, below),
  acceleratorType/Count (GPUs here are leased, gpus.py; none here is said in the log);
- refused with a 400 naming the field, before anything is stored (REFUSED_*): what would need
  something this machine cannot give, where accepting it would be a silent wrong answer;
- accepted with no local effect, said once in the job's log when the job starts (NOTES_*).

Vertex's own rules for these fields (formats, tensorboard needs serviceAccount, ...) are in
`vertexkit.specs` (worker_pools.CustomJobSpec, machines.MachineSpec).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from vertexkit.local.errors import bad_request, not_found
from vertexkit.local.vertex.store import ResourceStore, now_rfc3339
from vertexkit.specs import SpecError

# -- refused --------------------------------------------------------------------------------
# Source for each field: the aiplatform_v1 reference (CustomJobSpec, WorkerPoolSpec, NfsMount).
NO_SHELL = (
    "Vertex gives interactive shell URIs (webAccessUris) into the training containers; local "
    "replicas are processes on this machine with no container to open a shell in, so no URI "
    "can be given: leave it unset and read the replicas' logs"
)
NO_DASHBOARD = (
    "Vertex serves the chief container's dashboard at webAccessUris; the local cloud serves no "
    "URI into a replica: leave it unset (a local replica's ports are on 127.0.0.1 already)"
)
NO_MOUNT = (
    "Vertex mounts each share under /mnt/nfs/<mountPoint>; the local cloud cannot (mounting "
    "needs root, and an empty folder in its place would be a silent wrong answer): copy the "
    "data to Cloud Storage and read it with gs:// URIs"
)
REFUSED_SPEC: dict[str, str] = {
    "enableWebAccess": NO_SHELL,
    "enableDashboardAccess": NO_DASHBOARD,
}
REFUSED_POOL: dict[str, str] = {
    "nfsMounts": NO_MOUNT,
    "lustreMounts": NO_MOUNT.replace("/mnt/nfs/<mountPoint>", "its mountPoint"),
}

# -- no local effect: one log line each, when set ------------------------------------------
NOTES_JOB: dict[str, str] = {  # fields of the job itself, beside its spec
    "encryptionSpec": "nothing is encrypted with this key: the job's files stay unencrypted "
    "in the local cloud's home",
}
NOTES_SPEC: dict[str, str] = {
    "serviceAccount": "replicas run as your local user with the local cloud's credentials, "
    "not as this service account",
    "network": "replicas run on this machine's network; there is no VPC to peer with",
    "reservedIpRanges": "replicas listen on 127.0.0.1; no IP range is reserved",
    "pscInterfaceConfig": "there is no Private Service Connect interface on this machine",
    "protectedArtifactLocationId": "artifacts stay in the local cloud's home, in no other location",
    "models": "no model-to-artifact-URI mapping is given to the replicas (Vertex fills it only "
    "for some Google-provided custom jobs)",
}
NOTES_SCHEDULING: dict[str, str] = {
    "strategy": "every job runs at once on this machine: SPOT is never preempted here, "
    "FLEX_START never waits, no capacity is queued for",
    "maxWaitDuration": "jobs never wait for resources here: they start at once",
    "disableRetries": "no internal errors are retried here; it turns "
    "restartJobOnWorkerRestart off, as on Vertex",
}
NOTES_POOL: dict[str, str] = {
    "diskSpec": "replicas use this machine's disk; no boot disk of that type or size is made",
}
NOTES_MACHINE: dict[str, str] = {
    "reservationAffinity": "no reservation is consumed: replicas run on this machine",
    "gpuPartitionSize": "GPUs are not partitioned (MIG) here: a replica given a GPU gets the "
    "whole device",
    "tpuTopology": "there are no TPUs here: the replica runs on CPU",
}
UNSET = (None, "", [], {}, False, "STRATEGY_UNSPECIFIED")
NO_RUN_GENERATED = (
    "Vertex generates an ExperimentRun for a job with an experiment and no experimentRun; "
    "the local cloud does not: name one in experimentRun to have the job recorded on it"
)


def check_refused(spec: dict[str, Any], prefix: str) -> None:
    """Raises SpecError (a 400) naming the first field the local cloud refuses."""
    for key, why in REFUSED_SPEC.items():
        if spec.get(key) not in UNSET:
            raise SpecError(f"{prefix}.{key}", why)
    for index, pool in enumerate(spec.get("workerPoolSpecs") or []):
        for key, why in REFUSED_POOL.items():
            if pool.get(key) not in UNSET:
                raise SpecError(f"{prefix}.workerPoolSpecs[{index}].{key}", why)


def no_local_effect_notes(job_spec: dict[str, Any], job: dict[str, Any] | None = None) -> list[str]:
    """One line per field that is set and changes nothing here: `<field>: <why>`."""
    return [f"{field} is set: {why}." for field, why in _set_fields(job_spec, job or {})]


def _set_fields(spec: dict[str, Any], job: dict[str, Any]) -> Iterator[tuple[str, str]]:
    yield from _present(job, NOTES_JOB, "")
    yield from _present(spec, NOTES_SPEC, "")
    yield from _present(spec.get("scheduling") or {}, NOTES_SCHEDULING, "scheduling.")
    if spec.get("experiment") and not spec.get("experimentRun"):
        yield "experiment", NO_RUN_GENERATED
    for index, pool in enumerate(spec.get("workerPoolSpecs") or []):
        if not int(pool.get("replicaCount") or 0):
            continue
        prefix = f"workerPoolSpecs[{index}]."
        yield from _present(pool, NOTES_POOL, prefix)
        yield from _present(pool.get("machineSpec") or {}, NOTES_MACHINE, prefix + "machineSpec.")


def _present(
    message: dict[str, Any], notes: dict[str, str], prefix: str
) -> Iterator[tuple[str, str]]:
    for key, why in notes.items():
        if message.get(key) not in UNSET:
            yield f"{prefix}{key}", why


def log_notes(spec: dict[str, Any], log: Callable[[str], None], job: dict[str, Any]) -> None:
    for line in no_local_effect_notes(spec, job):
        log(line)


# -- what the fields name must exist --------------------------------------------------------
TENSORBOARDS = "tensorboards"  # the tensorboards area's collection (read, not imported)
CUSTOM_JOBS_KEY = "_custom_jobs"  # what the SDK's ExperimentRun.get_logged_custom_jobs reads
CUSTOM_JOB_NAME_KEY = "custom_job_resource_name"  # (google.cloud.aiplatform.metadata.constants)
SCHEMAS = {"experiment": "system.Experiment", "experimentRun": "system.ExperimentRun"}


def check_references(
    store: ResourceStore, location: str, spec: dict[str, Any], prefix: str
) -> None:
    """tensorboard, experiment and experimentRun name resources of the job's location that
    exist; the run is a run of the experiment. `location` is projects/P/locations/L."""
    if spec.get("tensorboard"):
        check_tensorboard(store, location, spec["tensorboard"], f"{prefix}.tensorboard")
    for key, schema in SCHEMAS.items():
        if spec.get(key):
            check_context(store, location, spec[key], schema, f"{prefix}.{key}")
    if spec.get("experimentRun"):
        run = store.find(spec["experimentRun"]) or {}
        if spec["experiment"] not in (run.get("parentContexts") or []):
            raise bad_request(
                f"{prefix}.experimentRun: {spec['experimentRun']} is not a run of experiment "
                f"{spec['experiment']} (it is not among the experiment's child contexts)"
            )


def check_tensorboard(store: ResourceStore, location: str, name: str, field: str) -> None:
    # The TensorBoard setup guide: the training job and the TensorBoard instance "must be in
    # same region".
    if not name.startswith(f"{location}/"):
        raise bad_request(f"{field}: {name} is not in {location}; a job writes to a "
                          "TensorBoard of its own project and region")  # fmt: skip
    if store.find(name) is None:
        raise not_found(f'{field}: Tensorboard "{name}" not found.')


def check_context(store: ResourceStore, location: str, name: str, schema: str, field: str) -> None:
    if not name.startswith(f"{location}/"):
        raise bad_request(f"{field}: {name} is not in {location}; a job is associated with an "
                          "experiment of its own project and region")  # fmt: skip
    context = store.find(name)
    if context is None:
        raise not_found(f'{field}: Context "{name}" not found.')
    if context.get("schemaTitle") != schema:
        raise bad_request(
            f"{field}: {name} is a {context.get('schemaTitle')} context, not a {schema}"
        )


def record_on_run(store: ResourceStore, job: dict[str, Any]) -> None:
    """Lists the job on its ExperimentRun context (`metadata._custom_jobs`, each entry's
    `custom_job_resource_name`): where the SDK's `ExperimentRun.get_logged_custom_jobs` reads
    a run's jobs from (the preview SDK writes the same entry itself after a create)."""
    run = (job.get("jobSpec") or {}).get("experimentRun")
    if not run or store.find(run) is None:
        return

    def add(context: dict[str, Any]) -> None:
        metadata = context.setdefault("metadata", {})
        jobs = metadata.setdefault(CUSTOM_JOBS_KEY, [])
        if all(entry.get(CUSTOM_JOB_NAME_KEY) != job["name"] for entry in jobs):
            jobs.append({CUSTOM_JOB_NAME_KEY: job["name"]})
        context["updateTime"] = now_rfc3339()

    store.mutate(run, add, kind="Context")
