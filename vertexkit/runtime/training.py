"""Custom jobs and hyperparameter tuning jobs: build the spec, then launch, resume, poll and
cancel it through the shared `jobs` module.

The component arguments become a `TrainingConfig`; `build_custom_job` turns it into the Vertex REST
JSON of a CustomJob, validated by `vertexkit.specs` before anything is created. Launching goes
through the GAPIC `JobServiceClient` from the CloudContext, so the same calls reach Vertex AI (gRPC)
and the local cloud (REST).
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field, fields
from typing import Any

from vertexkit.context import CloudContext
from vertexkit.runtime import gcs_io
from vertexkit.runtime.gapic import aiplatform_v1
from vertexkit.runtime.jobs import CUSTOM_JOB, TUNING_JOB, launch_and_wait
from vertexkit.specs import SpecError, images, validate_custom_job_spec, validate_tuning_job
from vertexkit.specs.inputs import check_component_inputs

log = logging.getLogger(__name__)

DATA_URI_ENV = {
    "training": "AIP_TRAINING_DATA_URI",
    "validation": "AIP_VALIDATION_DATA_URI",
    "test": "AIP_TEST_DATA_URI",
}


@dataclass
class TrainingConfig:
    """Everything a custom training job needs, in the component's vocabulary (snake_case)."""

    display_name: str
    base_output_directory: str
    container_image_uri: str = ""
    command: list[str] = field(default_factory=list)
    args: list[str] = field(default_factory=list)
    python_package_uris: list[str] = field(default_factory=list)
    trainer_dir: str = ""
    python_module: str = ""
    executor_image_uri: str = ""
    framework: str = ""
    framework_version: str = ""
    machine_type: str = "n1-standard-4"
    accelerator_type: str = ""
    accelerator_count: int = 0
    replica_count: int = 1
    extra_worker_pool_specs: list[dict[str, Any]] = field(default_factory=list)
    reduction_server_replica_count: int = 0
    reduction_server_machine_type: str = "n1-highcpu-16"
    boot_disk_type: str = "pd-ssd"
    boot_disk_size_gb: int = 100
    env: dict[str, str] = field(default_factory=dict)
    data_uris: dict[str, str] = field(default_factory=dict)
    service_account: str = ""
    network: str = ""
    encryption_spec_key_name: str = ""
    timeout: str = "604800s"
    restart_job_on_worker_restart: bool = False
    tensorboard: str = ""
    labels: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_component_arguments(cls, arguments: dict[str, Any]) -> TrainingConfig:
        """The job settings the training and tuning components share, taken from a component's
        arguments by name; `worker_pool_specs` are the extra pools and the three dataset inputs
        become data URIs."""
        names = {f.name for f in fields(cls)} - {"extra_worker_pool_specs", "data_uris"}
        config = cls(**{name: arguments[name] for name in names if name in arguments})
        config.extra_worker_pool_specs = list(arguments.get("worker_pool_specs") or [])
        datasets = {
            "training": arguments.get("training_data"),
            "validation": arguments.get("validation_data"),
            "test": arguments.get("test_data"),
        }
        config.data_uris = {name: data.uri for name, data in datasets.items() if data is not None}
        return config


@dataclass(frozen=True)
class TrainingResult:
    job_name: str
    model_dir: str
    metrics: dict[str, float] | None


# ---------------------------------------------------------------- validation and spec building


def validate_config(config: TrainingConfig) -> None:
    """The checks that belong to the component's arguments; the job spec rules live in specs."""
    check_component_inputs("custom_training_job", vars(config))  # the rules preflight applies
    if not config.base_output_directory.startswith("gs://"):
        raise SpecError(
            "base_output_directory",
            f"must be a gs:// URI for the model, got {config.base_output_directory!r}",
        )
    has_container = bool(config.container_image_uri)
    has_package = bool(config.python_package_uris or config.trainer_dir)
    if has_container == has_package:
        raise SpecError(
            "container_image_uri",
            "give exactly one of container_image_uri (a container) or python_package_uris / "
            "trainer_dir (a Python package)",
        )
    if has_package and not config.python_module:
        raise SpecError("python_module", "required with a Python package (e.g. trainer.task)")
    if has_package and not (config.executor_image_uri or config.framework):
        raise SpecError(
            "executor_image_uri",
            "a Python package needs a prebuilt training image: give executor_image_uri or "
            "framework (sklearn, xgboost, tensorflow, pytorch) and framework_version",
        )
    unknown_splits = set(config.data_uris) - set(DATA_URI_ENV)
    if unknown_splits:
        raise SpecError(
            "data_uris", f"unknown splits {sorted(unknown_splits)}; allowed: {sorted(DATA_URI_ENV)}"
        )
    if config.reduction_server_replica_count and not config.accelerator_type:
        raise SpecError(
            "reduction_server_replica_count",
            "Reduction Server speeds up all-reduce between GPU workers; set accelerator_type",
        )


def _env_list(env: dict[str, str]) -> list[dict[str, str]]:
    return [{"name": str(k), "value": str(v)} for k, v in env.items()]


def _trainer_args(config: TrainingConfig) -> list[str]:
    """User args plus one `--<split>-data-uri=URI` per dataset, the trainer's convention."""
    data_args = [f"--{split}-data-uri={uri}" for split, uri in config.data_uris.items() if uri]
    return [*config.args, *data_args]


def _trainer_env(config: TrainingConfig) -> dict[str, str]:
    data_env = {DATA_URI_ENV[split]: uri for split, uri in config.data_uris.items() if uri}
    return {**data_env, **config.env}


def _executor_image(config: TrainingConfig) -> str:
    if config.executor_image_uri:
        return config.executor_image_uri
    from vertexkit.runtime.packaging import prebuilt_training_image

    return prebuilt_training_image(
        config.framework, config.framework_version, config.accelerator_type, config.machine_type
    )


def _package_uris(ctx: CloudContext | None, config: TrainingConfig) -> list[str]:
    if config.python_package_uris:
        return list(config.python_package_uris)
    if ctx is None:
        raise ValueError("staging trainer_dir needs a CloudContext (where to upload it)")
    from vertexkit.runtime.packaging import stage_trainer

    bucket, _ = gcs_io.split_gs_uri(config.base_output_directory)
    return [stage_trainer(ctx, config.trainer_dir, f"gs://{bucket}")]


def _chief_pool(ctx: CloudContext | None, config: TrainingConfig) -> dict[str, Any]:
    machine: dict[str, Any] = {"machineType": config.machine_type}
    if config.accelerator_type:
        machine["acceleratorType"] = config.accelerator_type
        machine["acceleratorCount"] = config.accelerator_count
    pool: dict[str, Any] = {
        "machineSpec": machine,
        "replicaCount": "1",
        "diskSpec": {
            "bootDiskType": config.boot_disk_type,
            "bootDiskSizeGb": config.boot_disk_size_gb,
        },
    }
    env = _env_list(_trainer_env(config))
    if config.container_image_uri:
        pool["containerSpec"] = {
            "imageUri": config.container_image_uri,
            "command": list(config.command),
            "args": _trainer_args(config),
            "env": env,
        }
    else:
        image = _executor_image(config)  # refuses a framework/accelerator mismatch before staging
        pool["pythonPackageSpec"] = {
            "executorImageUri": image,
            "packageUris": _package_uris(ctx, config),
            "pythonModule": config.python_module,
            "args": _trainer_args(config),
            "env": env,
        }
    return pool


def _worker_pools(ctx: CloudContext | None, config: TrainingConfig) -> list[dict[str, Any]]:
    chief = _chief_pool(ctx, config)
    pools: list[dict[str, Any]] = [chief]
    if config.replica_count > 1:  # workers: same image and machine as the chief
        pools.append({**chief, "replicaCount": str(config.replica_count - 1)})
    if config.reduction_server_replica_count:
        while len(pools) < 2:
            pools.append({})
        pools.append(
            {
                "machineSpec": {"machineType": config.reduction_server_machine_type},
                "replicaCount": str(config.reduction_server_replica_count),
                "containerSpec": {"imageUri": images.image_tables().reduction_server_image},
            }
        )
    pools.extend(config.extra_worker_pool_specs)
    return pools


def build_custom_job_spec(ctx: CloudContext | None, config: TrainingConfig) -> dict[str, Any]:
    """The CustomJobSpec REST JSON (camelCase), validated."""
    validate_config(config)
    spec: dict[str, Any] = {
        "workerPoolSpecs": _worker_pools(ctx, config),
        "baseOutputDirectory": {"outputUriPrefix": config.base_output_directory},
        "scheduling": {
            "timeout": config.timeout,
            "restartJobOnWorkerRestart": config.restart_job_on_worker_restart,
        },
    }
    for key, value in (
        ("serviceAccount", config.service_account),
        ("network", config.network),
        ("tensorboard", config.tensorboard),
    ):
        if value:
            spec[key] = value
    validate_custom_job_spec(spec)
    return spec


def _job_envelope(config: TrainingConfig) -> dict[str, Any]:
    job: dict[str, Any] = {"displayName": config.display_name, "labels": dict(config.labels)}
    if config.encryption_spec_key_name:
        job["encryptionSpec"] = {"kmsKeyName": config.encryption_spec_key_name}
    return job


def build_custom_job(ctx: CloudContext | None, config: TrainingConfig) -> dict[str, Any]:
    """A CustomJob REST JSON ready for `customJobs.create`."""
    return {**_job_envelope(config), "jobSpec": build_custom_job_spec(ctx, config)}


# ---------------------------------------------------------------- launching and waiting


def read_metrics(ctx: CloudContext, model_dir: str) -> dict[str, float] | None:
    """The trainer's `metrics.json` in the model directory (numbers only), if it wrote one."""
    text = gcs_io.read_text(ctx, gcs_io.join(model_dir, "metrics.json"))
    if text is None:
        return None
    values = json.loads(text)
    return {
        k: float(v)
        for k, v in values.items()
        if isinstance(v, (int, float)) and not isinstance(v, bool)
    }


def run_custom_training(
    ctx: CloudContext, config: TrainingConfig, gcp_resources: str | None
) -> TrainingResult:
    """Builds, validates and runs the custom job; returns the model dir and trainer metrics."""
    job = launch_and_wait(ctx, CUSTOM_JOB, build_custom_job(ctx, config), gcp_resources)
    model_dir = gcs_io.join(config.base_output_directory, "model")
    return TrainingResult(job.name, model_dir, read_metrics(ctx, model_dir))


# ---------------------------------------------------------------- hyperparameter tuning

SCALES = {
    "linear": "UNIT_LINEAR_SCALE",
    "log": "UNIT_LOG_SCALE",
    "reverse_log": "UNIT_REVERSE_LOG_SCALE",
}
PARAMETER_TYPES = ("double", "integer", "categorical", "discrete")
_REST_VALUE_SPECS = (
    "doubleValueSpec",
    "integerValueSpec",
    "categoricalValueSpec",
    "discreteValueSpec",
)


@dataclass
class StudyConfig:
    metric_id: str
    goal: str
    parameters: list[dict[str, Any]]
    algorithm: str = "ALGORITHM_UNSPECIFIED"
    max_trial_count: int = 10
    parallel_trial_count: int = 2
    max_failed_trial_count: int = 0


@dataclass(frozen=True)
class TuningResult:
    job_name: str
    best_trial_id: str
    best_parameters: dict[str, Any]
    best_metric: float
    best_model_dir: str
    trials: list[dict[str, Any]]


def parameter_spec(compact: dict[str, Any], index: int) -> dict[str, Any]:
    """One parameter from the compact form into the StudySpec.ParameterSpec REST JSON.

    Compact: {"parameter_id": "max_depth", "type": "integer", "min": 2, "max": 8,
    "scale": "linear"}; categorical/discrete take "values". The REST form passes through.
    """
    where = f"parameters[{index}]"
    if any(key in compact for key in _REST_VALUE_SPECS):
        return dict(compact)
    parameter_id = compact.get("parameter_id") or compact.get("parameterId")
    if not parameter_id:
        raise SpecError(f"{where}.parameter_id", "every parameter needs a parameter_id")
    kind = compact.get("type")
    if kind not in PARAMETER_TYPES:
        raise SpecError(f"{where}.type", f"{kind!r} is not one of {', '.join(PARAMETER_TYPES)}")
    spec: dict[str, Any] = {"parameterId": parameter_id}
    if kind in ("double", "integer"):
        if "min" not in compact or "max" not in compact:
            raise SpecError(f"{where}", f"a {kind} parameter needs min and max")
        if compact["min"] > compact["max"]:
            raise SpecError(f"{where}.min", f"min {compact['min']} is above max {compact['max']}")
        if kind == "double":
            value_spec = {"minValue": float(compact["min"]), "maxValue": float(compact["max"])}
            spec["doubleValueSpec"] = value_spec
        else:
            spec["integerValueSpec"] = {
                "minValue": str(int(compact["min"])),
                "maxValue": str(int(compact["max"])),
            }
    else:
        values = compact.get("values")
        if not isinstance(values, list) or not values:
            raise SpecError(f"{where}.values", f"a {kind} parameter needs a non-empty values list")
        if kind == "categorical":
            spec["categoricalValueSpec"] = {"values": [str(v) for v in values]}
        else:
            spec["discreteValueSpec"] = {"values": [float(v) for v in values]}
    scale = compact.get("scale")
    if scale is not None:
        if scale not in SCALES or kind in ("categorical",):
            raise SpecError(
                f"{where}.scale",
                f"{scale!r} is not one of {', '.join(SCALES)} (numeric parameters only)",
            )
        spec["scaleType"] = SCALES[scale]
    return spec


def build_study_spec(study: StudyConfig) -> dict[str, Any]:
    if not study.metric_id:
        raise SpecError("metric_id", "name the metric the trainer reports through hypertune")
    check_component_inputs("hyperparameter_tuning_job", vars(study))  # goal, algorithm, counts
    if not study.parameters:
        raise SpecError("parameters", "give at least one parameter to tune")
    return {
        "metrics": [{"metricId": study.metric_id, "goal": study.goal}],
        "parameters": [parameter_spec(p, i) for i, p in enumerate(study.parameters)],
        "algorithm": study.algorithm,
    }


def build_tuning_job(
    ctx: CloudContext | None, config: TrainingConfig, study: StudyConfig
) -> dict[str, Any]:
    """A HyperparameterTuningJob REST JSON, validated."""
    check_component_inputs("hyperparameter_tuning_job", vars(study))  # the rules preflight applies
    job = {
        **_job_envelope(config),
        "studySpec": build_study_spec(study),
        "maxTrialCount": study.max_trial_count,
        "parallelTrialCount": study.parallel_trial_count,
        "maxFailedTrialCount": study.max_failed_trial_count,
        "trialJobSpec": build_custom_job_spec(ctx, config),
    }
    validate_tuning_job(job)
    return job


def _trial_json(trial: Any) -> dict[str, Any]:
    return json.loads(aiplatform_v1.Trial.to_json(trial, use_integers_for_enums=False))


def _trial_metric(trial: dict[str, Any], metric_id: str) -> float | None:
    for metric in trial.get("finalMeasurement", {}).get("metrics", []):
        if metric.get("metricId") == metric_id:
            return float(metric.get("value", 0.0))
    return None


def best_trial(trials: list[dict[str, Any]], metric_id: str, goal: str) -> dict[str, Any]:
    """The succeeded trial with the best final value of `metric_id` for `goal`."""
    measured = [
        (value, trial)
        for trial in trials
        if trial.get("state") == "SUCCEEDED"
        and (value := _trial_metric(trial, metric_id)) is not None
    ]
    if not measured:
        raise RuntimeError(f"no trial succeeded with a final value of {metric_id!r}")
    pick = max if goal == "MAXIMIZE" else min
    return pick(measured, key=lambda pair: pair[0])[1]


def trial_parameters(trial: dict[str, Any]) -> dict[str, Any]:
    return {p["parameterId"]: p.get("value") for p in trial.get("parameters", [])}


def run_tuning(
    ctx: CloudContext, config: TrainingConfig, study: StudyConfig, gcp_resources: str | None
) -> TuningResult:
    """Runs the tuning job; returns the best trial, its metric and its model dir."""
    job = launch_and_wait(ctx, TUNING_JOB, build_tuning_job(ctx, config, study), gcp_resources)
    trials = [_trial_json(trial) for trial in job.trials]
    best = best_trial(trials, study.metric_id, study.goal)
    return TuningResult(
        job_name=job.name,
        best_trial_id=best["id"],
        best_parameters=trial_parameters(best),
        best_metric=_trial_metric(best, study.metric_id) or 0.0,
        # Vertex's layout: each trial writes below <base>/<trial_id>/ (AIP_MODEL_DIR = .../model).
        best_model_dir=gcs_io.join(config.base_output_directory, best["id"], "model"),
        trials=trials,
    )
