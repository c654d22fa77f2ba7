# ruff: noqa: E501  (one line per field keeps the table readable)
"""Dispositions decided by the areas' own code, laid over the grep-built table (`table.py`).

The job-spec entries come from the training area's one table (`training/dispositions.py`:
what is refused and what is said in the job log), so a field moved there moves here. The
tuning, serving and batch-explanation entries name the code that decides them.
"""

from __future__ import annotations

import re

from vertexkit.local.vertex.dispositions.model import (
    PACKAGE,
    Disposition,
    honoured,
    no_local_effect,
    refused,
)
from vertexkit.local.vertex.training import dispositions as job_fields

STOPPING = "training/tuning.py and training/early_stopping.py on the trials' measurements"
CONVEX = "refused (specs/study.py): the autoregressive convex rule is not run locally"
PROBE = "run against the local server process (registry/serving.py), Kubernetes timing"
ONE_SERVER = "noted in the deploy operation (one local server per deployed model)"

# fmt: off
OWN: dict[tuple[str, str], Disposition] = {
    ("StudySpec", "decay_curve_stopping_spec"): honoured(f"an approximation of the decay-curve rule, {STOPPING}"),
    ("StudySpec.DecayCurveAutomatedStoppingSpec", "use_elapsed_duration"): honoured(f"elapsed time instead of steps, {STOPPING}"),
    ("StudySpec", "median_automated_stopping_spec"): honoured(f"the median rule, {STOPPING}"),
    ("StudySpec.MedianAutomatedStoppingSpec", "use_elapsed_duration"): honoured(f"elapsed time instead of steps, {STOPPING}"),
    ("StudySpec", "convex_automated_stopping_spec"): refused(CONVEX),
    **{("StudySpec.ConvexAutomatedStoppingSpec", field): refused(CONVEX) for field in (
        "max_step_count", "min_step_count", "min_measurement_count",
        "learning_rate_parameter_name", "use_elapsed_duration", "update_all_stopped_trials")},
    ("StudySpec", "observation_noise"): refused("refused when set (specs/study.py): Optuna has no noise model"),
    ("StudySpec", "study_stopping_config"): honoured("checked before each new trial (training/tuning.py)"),
    **{("StudySpec.StudyStoppingConfig", field): honoured("checked before each new trial (training/tuning.py)")
       for field in ("should_stop_asap", "minimum_runtime_constraint", "maximum_runtime_constraint",
                     "min_num_trials", "max_num_trials", "max_num_trials_no_progress",
                     "max_duration_no_progress")},
    ("ModelContainerSpec", "ports"): honoured("AIP_HTTP_PORT is ports[0] when free on 127.0.0.1, else the deploy fails (registry/serving.py)"),
    ("ModelContainerSpec", "startup_probe"): honoured(f"a failing one fails the deploy; {PROBE}"),
    ("ModelContainerSpec", "health_probe"): honoured(f"checked at deploy; {PROBE}"),
    ("ModelContainerSpec", "liveness_probe"): no_local_effect("noted in the deploy operation: not re-run after deploy"),
    ("ModelContainerSpec", "shared_memory_size_mb"): no_local_effect("noted in the deploy operation: a local process has the machine's shared memory"),
    ("ModelContainerSpec", "deployment_timeout"): honoured("the deploy fails after it (registry/endpoints.py)"),
    ("ModelContainerSpec", "grpc_ports"): refused("local model servers speak HTTP only (specs/serving.py)"),
    ("ModelContainerSpec", "invoke_route_prefix"): refused("no invoke routes locally (specs/serving.py)"),
    **{("Probe", field): honoured(PROBE) for field in (
        "exec_", "http_get", "tcp_socket", "period_seconds", "timeout_seconds",
        "failure_threshold", "success_threshold", "initial_delay_seconds")},
    ("Probe", "grpc"): refused("a gRPC probe is not run locally (specs/serving.py)"),
    **{(message, field): honoured(PROBE) for message, field in (
        ("Probe.ExecAction", "command"), ("Probe.HttpGetAction", "path"),
        ("Probe.HttpGetAction", "port"), ("Probe.HttpGetAction", "scheme"),
        ("Probe.HttpGetAction", "http_headers"), ("Probe.HttpHeader", "name"),
        ("Probe.HttpHeader", "value"), ("Probe.TcpSocketAction", "port"))},
    ("Probe.HttpGetAction", "host"): honoured("localhost only; another host is refused (specs/serving.py)"),
    ("Probe.TcpSocketAction", "host"): honoured("localhost only; another host is refused (specs/serving.py)"),
    ("Probe.GrpcAction", "port"): refused("a gRPC probe is not run locally (specs/serving.py)"),
    ("Probe.GrpcAction", "service"): refused("a gRPC probe is not run locally (specs/serving.py)"),
    ("DedicatedResources", "max_replica_count"): no_local_effect(ONE_SERVER),
    ("DedicatedResources", "autoscaling_metric_specs"): no_local_effect(ONE_SERVER),
    ("DedicatedResources", "required_replica_count"): no_local_effect(ONE_SERVER),
    ("DedicatedResources", "spot"): no_local_effect(ONE_SERVER),
    ("BatchPredictionJob", "generate_explanation"): honoured("sampled Shapley per result line (batch_prediction/run.py, registry/explain.py)"),
    ("BatchPredictionJob", "explanation_spec"): honoured("merged over the model's (registry/explain.py merged_spec)"),
}
# fmt: on

# The training area's table, by the proto message each of its field groups belongs to.
JOB_GROUPS = (
    ("CustomJobSpec", job_fields.REFUSED_SPEC, refused),
    ("WorkerPoolSpec", job_fields.REFUSED_POOL, refused),
    ("CustomJob", job_fields.NOTES_JOB, no_local_effect),
    ("CustomJobSpec", job_fields.NOTES_SPEC, no_local_effect),
    ("Scheduling", job_fields.NOTES_SCHEDULING, no_local_effect),
    ("WorkerPoolSpec", job_fields.NOTES_POOL, no_local_effect),
    ("MachineSpec", job_fields.NOTES_MACHINE, no_local_effect),
)


def snake(camel: str) -> str:
    return re.sub(r"(?<!^)([A-Z])", r"_\1", camel).lower()


def decided() -> dict[tuple[str, str], Disposition]:
    """The areas' own decisions, keyed by full message name."""
    own = dict(OWN)
    for message, group, disposition in JOB_GROUPS:
        for field, why in group.items():
            own[(message, snake(field))] = disposition(f"training/dispositions.py: {why}")
    return {(PACKAGE + message, field): d for (message, field), d in own.items()}
