"""`vertexkit run`: one compiled pipeline, run on the local cloud or submitted to Vertex AI.

One path for both targets (`run_pipeline_job`, `submit_vertex_job`): the request is the one
`aiplatform.PipelineJob` builds (parameters, pipeline root, the caching rewrite of every task),
created as a PipelineJob and followed to its end with `vertexkit.pipeline_jobs.follow`. Locally
the job is created through the GAPIC client on the `vertexkit local up` serving the home, or else
on a local cloud in a process of its own (`local_cloud`, `vertexkit.cloud_process`), which runs
it with `kfp.local` in a pipeline driver process and reports every task the way Vertex does. A
local run builds that request itself (`pipeline_job_request`) rather than importing the SDK for
it (about 2 s of CPU before the job exists); `runner_test.py` holds it equal to the SDK's.

Tests, the notebook and the benchmarks run pipelines this same way: there is no other local
path.
"""

from __future__ import annotations

import copy
import re
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vertexkit.compiler import DEFAULT_IMAGE, compile_to_text
from vertexkit.context import CloudContext, environ_set
from vertexkit.pipeline_params import input_parameters, parse_params, pipeline_spec
from vertexkit.pipeline_registry import short_name
from vertexkit.preflight import check_data, check_pipeline

if TYPE_CHECKING:
    from vertexkit.cloud_process import CloudProcess

PIPELINE_BUCKET_SUFFIX = "-vertexkit-pipelines"
# The job IDs `aiplatform.PipelineJob` accepts (google.cloud.aiplatform.constants.pipeline).
VALID_JOB_ID = re.compile("^[a-z][-a-z0-9]{0,127}$", re.IGNORECASE)
# What every run fills in from its target when the pipeline declares them (`target_parameters`).
TARGET_PARAMETERS = frozenset({"project", "location", "gcs_root"})


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C while a run was followed: `job_name` and what became of it. `where` is
    `cancelled` (the run's own local cloud ends with the command, so the run was cancelled),
    `local-up` (a `vertexkit local up` serves it: it continues) or `vertex` (it continues on
    Vertex AI: following a job is only reading it, as the console or `gcloud` do)."""

    def __init__(self, job_name: str, where: str, console_url: str = "") -> None:
        super().__init__(job_name)
        self.job_name, self.where, self.console_url = job_name, where, console_url


@dataclass
class FinishedRun:
    """A pipeline job that ended SUCCEEDED: its final JSON and the outputs read back from it."""

    name: str
    job: dict[str, Any]
    outputs: dict[str, Any]  # pipeline output -> artifact dict or parameter value
    seconds: float
    pipeline_root: str
    context: CloudContext
    params: dict[str, Any] = field(default_factory=dict)


def prepare(name_or_ref: str, assignments: list[str], image: str | None = None) -> tuple[str, dict]:
    """Compiles the pipeline and parses its parameters: every check before anything is created."""
    pipeline_yaml = compile_to_text(name_or_ref, image)
    params = parse_params(pipeline_yaml, assignments, filled_by_target=TARGET_PARAMETERS)
    check_pipeline(pipeline_spec(pipeline_yaml), effective_values(pipeline_yaml, params))
    return pipeline_yaml, params


def effective_values(pipeline_yaml: str, params: dict[str, Any]) -> dict[str, Any]:
    """The pipeline's defaults overlaid with the given parameters."""
    declared = input_parameters(pipeline_yaml)
    return {key: spec.get("defaultValue") for key, spec in declared.items()} | params


def run_pipeline_job(
    name_or_ref: str,
    params: dict[str, Any],
    pipeline_yaml: str,
    home: Path | None = None,
    enable_caching: bool | None = None,
    emit: Callable[[str], None] = print,
    while_running: Callable[[FinishedRun], None] | None = None,
    max_parallel: int | None = None,
    cloud_process: CloudProcess | None = None,
) -> FinishedRun:
    """Creates a PipelineJob on the local cloud (`local_cloud`) and follows it to the end.

    `enable_caching` None keeps each task's own caching option (`set_caching_options`), as
    Vertex does; True or False overrides every task. `max_parallel` bounds the task processes
    that run at once (default: the core count). `cloud_process`: the run's local cloud, spawned
    early by the caller (`local_cloud`).

    `while_running` gets the finished run before the local cloud stops (the summary sends a
    prediction to the deployed endpoint). A failed or cancelled job raises PipelineJobFailed
    naming the failed tasks; Ctrl-C cancels the job before the local cloud stops.
    """
    from vertexkit import pipeline_jobs

    name = short_name(name_or_ref)
    with local_cloud(home, cloud_process, caching=enable_caching is not False) as cloud:
        context = cloud.context()
        root_uri = f"gs://{context.project}{PIPELINE_BUCKET_SUFFIX}"
        filled = target_parameters(
            pipeline_yaml, params, context.project, context.region, f"{root_uri}/{name}"
        )
        check_data(context, effective_values(pipeline_yaml, filled))  # before creating anything
        cloud.storage.ensure_bucket(root_uri.removeprefix("gs://"))
        with environ_set(cloud.env()):
            sdk_job_id, body = pipeline_job_request(
                name,
                params,
                pipeline_yaml,
                context.project,
                context.region,
                root_uri,
                enable_caching=enable_caching,
                labels=_max_parallel_label(max_parallel),
            )
            _write_template(cloud.home / "pipelines", name, pipeline_yaml)
            # The SDK's job ID has one-second resolution; a scheduled run or a quick rerun in the
            # same second would collide (409), so local runs add a short random suffix.
            job_id = f"{sdk_job_id}-{uuid.uuid4().hex[:6]}"
            job_name = pipeline_jobs.create_job(context, body, job_id)
            emit(f"created {job_name}")
            emit(f"console: {cloud.url}/console/{job_name}")  # live while the run goes on
            lasting = getattr(cloud, "lasting", False)
            try:
                job = pipeline_jobs.follow(context, job_name, emit)
            except KeyboardInterrupt:
                if lasting:  # a `local up`, as Vertex AI, keeps the run going
                    raise RunInterrupted(job_name, "local-up") from None
                pipeline_jobs.cancel_job(context, job_name)
                raise RunInterrupted(job_name, "cancelled") from None
            try:
                pipeline_jobs.raise_unless_succeeded(job)
            except pipeline_jobs.PipelineJobFailed as exc:
                log = cloud.home / "vertex" / "pipelineJobs" / job_name.rsplit("/", 1)[-1]
                raise pipeline_jobs.PipelineJobFailed(
                    f"{exc} (task logs: {log / 'driver.log'})"
                ) from None
            run = FinishedRun(
                name=name,
                job=job,
                outputs=pipeline_jobs.pipeline_outputs(job),
                seconds=_job_seconds(job),
                pipeline_root=_job_root(job, context.project),
                context=context,
                params=effective_values(pipeline_yaml, _job_parameters(job)),
            )
            if while_running:
                while_running(run)
        return run


@contextmanager
def local_cloud(
    home: Path | None, process: CloudProcess | None = None, caching: bool = True
) -> Iterator[Any]:
    """The `vertexkit local up` already serving `home` (a second local cloud on the same state
    would run its queued jobs too), else a local cloud for the run in a process of its own
    (`vertexkit.cloud_process`; `process` when the caller spawned it early), with a pipeline
    driver on standby for the job about to be created (`caching`: the job may come from the
    cache, see `CloudProcess.spawn`). A caller that passes `process` has found no `local up`
    serving the home; the process is closed when the run ends."""
    from vertexkit.cloud_process import CloudProcess
    from vertexkit.local_up import ServedLocalCloud, home_or_default, running_local_up

    running = running_local_up(home) if process is None else None  # the caller asked already
    if running is not None:
        yield ServedLocalCloud(home_or_default(home), running, lasting=True)
        return
    process = process or CloudProcess.spawn(home, caching)
    try:
        yield process.serve()
    finally:
        process.close()


def submit_vertex_job(
    sdk_job: Any,
    service_account: str | None,
    wait: bool,
    emit: Callable[[str], None] = print,
) -> dict[str, Any] | None:
    """Submits the job to Vertex AI and, with `wait`, follows it like a local one."""
    from vertexkit import pipeline_jobs

    sdk_job.submit(service_account=service_account)
    emit(f"submitted {sdk_job.resource_name}")
    console_url = sdk_job._dashboard_uri()
    emit(f"console: {console_url}")
    if not wait:
        return None
    context = CloudContext(project=sdk_job.project, region=sdk_job.location)
    try:
        job = pipeline_jobs.follow(context, sdk_job.resource_name, emit)
    except KeyboardInterrupt:
        raise RunInterrupted(sdk_job.resource_name, "vertex", console_url) from None
    pipeline_jobs.raise_unless_succeeded(job)
    return job


def _max_parallel_label(max_parallel: int | None) -> dict[str, str] | None:
    from vertexkit.local.vertex.pipelines.runner import MAX_PARALLEL_LABEL

    return {MAX_PARALLEL_LABEL: str(max_parallel)} if max_parallel else None


def _job_root(job: dict[str, Any], project: str) -> str:
    """Where the job's artifacts live: `<pipeline root>/<project>/<job id>`, as on Vertex
    (which uses the project number there)."""
    root = job.get("runtimeConfig", {}).get("gcsOutputDirectory", "").rstrip("/")
    return f"{root}/{project}/{job.get('name', '').rsplit('/', 1)[-1]}"


def _job_parameters(job: dict[str, Any]) -> dict[str, Any]:
    return dict(job.get("runtimeConfig", {}).get("parameterValues") or {})


def _job_seconds(job: dict[str, Any]) -> float:
    from vertexkit.pipeline_jobs import parse_time

    start, end = parse_time(job.get("startTime")), parse_time(job.get("endTime"))
    return (end - start).total_seconds() if start and end else 0.0


def target_parameters(
    pipeline_yaml: str, params: dict[str, Any], project: str, region: str, gcs_root: str
) -> dict[str, Any]:
    """`params` plus what every run fills in from its target (`project`, `location`,
    `gcs_root`), kept to the parameters the pipeline declares."""
    values = {"project": project, "location": region, "gcs_root": gcs_root, **params}
    declared = declared_parameters(pipeline_yaml)
    return {key: value for key, value in values.items() if key in declared}


def declared_parameters(pipeline_yaml: str) -> set[str]:
    return set(input_parameters(pipeline_yaml))


def pipeline_job_request(
    name_or_ref: str,
    params: dict[str, Any],
    pipeline_yaml: str,
    project: str,
    region: str,
    pipeline_root: str,
    enable_caching: bool | None = None,
    labels: dict[str, str] | None = None,
) -> tuple[str, dict[str, Any]]:
    """The job ID and the PipelineJob (Vertex's JSON) that `build_vertex_job`'s
    `aiplatform.PipelineJob` sends, built without importing the SDK (about 2 s of CPU on a local
    run). The same display name, labels, runtime config and caching rewrite, in the SDK's
    order; `runner_test.py` holds the two equal. Compiled pipelines are schema 2.1.0 and up, so
    parameters go in `parameterValues` as plain values, as the SDK sends them there."""
    if not pipeline_root.startswith("gs://"):
        raise ValueError(f"--pipeline-root must be a gs:// URI, got {pipeline_root!r}")
    name = short_name(name_or_ref)
    display_name = run_display_name(pipeline_yaml)
    _check_sdk_arguments(display_name, labels)
    spec = pipeline_spec(pipeline_yaml)
    values = target_parameters(
        pipeline_yaml, params, project, region, f"{pipeline_root.rstrip('/')}/{name}"
    )
    runtime_config = {
        "gcsOutputDirectory": pipeline_root,
        "parameterValues": _parameter_values(spec, values),
        "inputArtifacts": {},
    }
    job_id = _sdk_job_id(spec)
    if enable_caching is not None:
        _set_caching(spec, enable_caching)
    body = {"displayName": display_name, "pipelineSpec": spec, "runtimeConfig": runtime_config}
    if labels:
        body["labels"] = dict(labels)
    return job_id, body


def run_display_name(pipeline_yaml: str) -> str:
    """A run's display name: the pipeline's own name (`@dsl.pipeline(name=...)`, the
    `pipelineInfo.name` of its spec), as `aiplatform.PipelineJob` names a run it is not given a
    name for; the built-ins are `vertexkit-training`, `vertexkit-tuning`, ...."""
    return str((pipeline_spec(pipeline_yaml).get("pipelineInfo") or {}).get("name") or "pipeline")


def _check_sdk_arguments(display_name: str, labels: dict[str, str] | None) -> None:
    """The SDK's own refusals (`utils.validate_display_name`, `validate_labels`), word for word."""
    if len(display_name) > 128:
        raise ValueError("Display name needs to be less than 128 characters.")
    for key, value in (labels or {}).items():
        if not isinstance(key, str) or not isinstance(value, str):
            raise ValueError(
                f'Expect labels to be a mapping of string key value pairs. Got "{labels}".'
            )


def _parameter_values(spec: dict[str, Any], values: dict[str, Any]) -> dict[str, Any]:
    """`PipelineRuntimeConfigBuilder.build()`: None values left out, undeclared ones refused."""
    declared = (spec.get("root") or {}).get("inputDefinitions", {}).get("parameters", {})
    for key in values:
        if key not in declared:
            raise ValueError(
                f"The pipeline parameter {key} is not found in the pipeline job input definitions."
            )
    return {key: copy.deepcopy(value) for key, value in values.items() if value is not None}


def _sdk_job_id(spec: dict[str, Any]) -> str:
    """`<pipeline name>-<local time to the second>`, as `aiplatform.PipelineJob` names a job."""
    pipeline_name = spec["pipelineInfo"]["name"]
    slug = re.sub("[^-0-9a-z]+", "-", pipeline_name.lower()).lstrip("-").rstrip("-")
    job_id = f"{slug}-{datetime.now().strftime('%Y%m%d%H%M%S')}"
    if not VALID_JOB_ID.match(job_id):
        raise ValueError(
            f"Generated job ID: {job_id} is illegal as a Vertex pipelines job ID. "
            "Expecting an ID following the regex pattern "
            f'"{VALID_JOB_ID.pattern[1:-1]}"'
        )
    return job_id


def _set_caching(spec: dict[str, Any], enable_caching: bool) -> None:
    """The SDK's `_set_enable_caching_value`: every task of every DAG gets the one option."""
    for component in [spec["root"], *spec["components"].values()]:
        if "dag" in component:
            for task in component["dag"]["tasks"].values():
                task["cachingOptions"] = {"enableCache": enable_caching}


def _write_template(work_dir: Path, name: str, pipeline_yaml: str) -> None:
    """The compiled YAML beside the job, where the SDK's template file was written."""
    work_dir.mkdir(parents=True, exist_ok=True)
    (work_dir / f"{name}.yaml").write_text(pipeline_yaml)


def build_vertex_job(
    name_or_ref: str,
    params: dict[str, Any],
    pipeline_yaml: str,
    project: str,
    region: str,
    pipeline_root: str,
    enable_caching: bool | None = None,
    work_dir: Path | None = None,
    credentials: Any = None,
    labels: dict[str, str] | None = None,
) -> Any:
    """An `aiplatform.PipelineJob` for the compiled YAML, built but not submitted.

    `credentials` default to Application Default Credentials, as the SDK's do.
    """
    from google.cloud import aiplatform

    if not pipeline_root.startswith("gs://"):
        raise ValueError(f"--pipeline-root must be a gs:// URI, got {pipeline_root!r}")
    CloudContext(project=project, region=region).init_aiplatform(
        staging_bucket=pipeline_root, credentials=credentials
    )
    name = short_name(name_or_ref)
    work_dir = work_dir or Path.cwd() / ".vertexkit" / "submitted"
    work_dir.mkdir(parents=True, exist_ok=True)
    template = work_dir / f"{name}.yaml"
    template.write_text(pipeline_yaml)
    values = target_parameters(
        pipeline_yaml, params, project, region, f"{pipeline_root.rstrip('/')}/{name}"
    )
    return aiplatform.PipelineJob(
        display_name=run_display_name(pipeline_yaml),
        template_path=str(template),
        pipeline_root=pipeline_root,
        parameter_values=values,
        enable_caching=enable_caching,
        project=project,
        location=region,
        credentials=credentials,
        labels=labels,
    )


def image_warning(image: str | None) -> str | None:
    if not image or image == DEFAULT_IMAGE:
        return (
            f"the components use the placeholder image {DEFAULT_IMAGE!r}; build and push the "
            "runtime image (see README) and pass --image"
        )
    return None
