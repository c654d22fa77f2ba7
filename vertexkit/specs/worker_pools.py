"""Worker pools, scheduling and the CustomJobSpec, validated the way Vertex does on create.

Pool layout (Vertex distributed training): pool 0 is the chief (exactly one replica), pool 1
the workers, pool 2 parameter servers or a Reduction Server, pool 3 evaluators. Pools 1 and
2 may be empty placeholders (`{}`) when a later pool is used.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import Field, field_validator

from vertexkit.specs.base import SpecModel, enum_name
from vertexkit.specs.catalog import catalog
from vertexkit.specs.errors import SpecError, allowed, join_path
from vertexkit.specs.machines import DiskSpec, MachineSpec

MAX_WORKER_POOLS = 4
POOL_ROLES = ("chief", "workers", "parameter servers or Reduction Server", "evaluators")
STRATEGIES = ("STRATEGY_UNSPECIFIED", "ON_DEMAND", "LOW_COST", "STANDARD", "SPOT", "FLEX_START")
DURATION = re.compile(r"^(\d+)(\.\d{1,9})?s$")
GCS_URI = re.compile(r"^gs://[a-z0-9][a-z0-9._-]{1,220}[a-z0-9](/.*)?$")
# Resource name formats from the CustomJobSpec reference (aiplatform_v1 custom_job.proto):
# tensorboard "projects/{project}/locations/{location}/tensorboards/{tensorboard}", experiment
# ".../metadataStores/{metadataStores}/contexts/{experiment-name}", experimentRun
# ".../contexts/{experiment-name}-{experiment-run-name}".
TENSORBOARD_NAME = re.compile(r"^projects/[^/]+/locations/[^/]+/tensorboards/[^/]+$")
CONTEXT_NAME = re.compile(r"^projects/[^/]+/locations/[^/]+/metadataStores/[^/]+/contexts/[^/]+$")
# The SDK documents both (`CustomJob.run`): "`service_account` is required with provided
# `tensorboard`" and "... with provided `experiment`"; the TensorBoard setup guide: "The Vertex
# AI TensorBoard integration with custom training requires attaching a service account."
NEEDS_SERVICE_ACCOUNT = ("tensorboard", "experiment")

Strategy = Literal[
    "STRATEGY_UNSPECIFIED", "ON_DEMAND", "LOW_COST", "STANDARD", "SPOT", "FLEX_START"
]


def _env_list(value: Any) -> Any:
    """Accepts `{"NAME": "value"}` from Python callers; the wire form is a list of name/value."""
    if isinstance(value, dict):
        return [{"name": str(name), "value": str(env_value)} for name, env_value in value.items()]
    return value


class EnvVar(SpecModel):
    name: str
    value: str = ""

    def check(self, path: str) -> None:
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", self.name):
            raise SpecError(
                join_path(path, "name"),
                f"must be a C identifier (letters, digits, _; not starting with a digit); "
                f"got {self.name!r}",
            )


class ContainerSpec(SpecModel):
    """A container image with optional command (ENTRYPOINT) and args (CMD) overrides."""

    image_uri: str = ""
    command: list[str] | None = None
    args: list[str] | None = None
    env: list[EnvVar] | None = None

    @field_validator("env", mode="before")
    @classmethod
    def _env_from_dict(cls, value: Any) -> Any:
        return _env_list(value)

    def check(self, path: str) -> None:
        if not self.image_uri.strip():
            raise SpecError(join_path(path, "imageUri"), "required: the container image to run")
        _check_env(self.env, path)


class PythonPackageSpec(SpecModel):
    """A Python source distribution from Cloud Storage run in a prebuilt training container."""

    executor_image_uri: str = ""
    package_uris: list[str] = Field(default_factory=list)
    python_module: str = ""
    args: list[str] | None = None
    env: list[EnvVar] | None = None

    @field_validator("env", mode="before")
    @classmethod
    def _env_from_dict(cls, value: Any) -> Any:
        return _env_list(value)

    def check(self, path: str) -> None:
        if not self.executor_image_uri.strip():
            raise SpecError(
                join_path(path, "executorImageUri"),
                "required: a prebuilt training container image",
            )
        if not self.package_uris:
            raise SpecError(
                join_path(path, "packageUris"), "required: at least one gs:// URI of a package"
            )
        for index, uri in enumerate(self.package_uris):
            if not GCS_URI.match(uri):
                raise SpecError(
                    join_path(join_path(path, "packageUris"), index),
                    f"must be a gs://bucket/object URI; got {uri!r}",
                )
        if not re.fullmatch(
            r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*", self.python_module
        ):
            raise SpecError(
                join_path(path, "pythonModule"),
                f"required: a dotted Python module name such as trainer.task; "
                f"got {self.python_module!r}",
            )
        _check_env(self.env, path)


def _check_env(env: list[EnvVar] | None, path: str) -> None:
    seen: set[str] = set()
    for index, variable in enumerate(env or []):
        item = join_path(join_path(path, "env"), index)
        variable.check(item)
        if variable.name in seen:
            raise SpecError(join_path(item, "name"), f"duplicate variable {variable.name!r}")
        seen.add(variable.name)


class WorkerPoolSpec(SpecModel):
    """One pool of identical replicas; an all-empty spec is a placeholder for an unused pool."""

    container_spec: ContainerSpec | None = None
    python_package_spec: PythonPackageSpec | None = None
    machine_spec: MachineSpec | None = None
    replica_count: int | None = Field(default=None, ge=0)
    nfs_mounts: list[dict[str, Any]] | None = None
    lustre_mounts: list[dict[str, Any]] | None = None
    disk_spec: DiskSpec | None = None

    @property
    def is_placeholder(self) -> bool:
        return all(getattr(self, name) in (None, [], 0) for name in type(self).model_fields)

    @property
    def replicas(self) -> int:
        return self.replica_count or 0

    @property
    def is_reduction_server(self) -> bool:
        image = self.container_spec.image_uri if self.container_spec else ""
        return image.split("@")[0].rsplit(":", 1)[0] == catalog().reduction_server_image

    def check(self, path: str) -> None:
        if self.is_placeholder:
            return
        if (self.container_spec is None) == (self.python_package_spec is None):
            raise SpecError(
                path,
                "set exactly one of containerSpec or pythonPackageSpec",
            )
        if self.container_spec is not None:
            self.container_spec.check(join_path(path, "containerSpec"))
        if self.python_package_spec is not None:
            self.python_package_spec.check(join_path(path, "pythonPackageSpec"))
        if self.machine_spec is None:
            raise SpecError(join_path(path, "machineSpec"), "required: machineType at least")
        self.machine_spec.check(join_path(path, "machineSpec"))
        if self.disk_spec is not None:
            self.disk_spec.check(join_path(path, "diskSpec"))

    def with_defaults(self) -> WorkerPoolSpec:
        """The pool as Vertex stores it: the default boot disk filled in."""
        if self.is_placeholder or self.disk_spec is not None:
            return self
        return self.model_copy(update={"disk_spec": DiskSpec()})


def _duration(value: Any) -> Any:
    """Python callers may give seconds; the wire form is a protobuf Duration string."""
    if value is None or isinstance(value, str):
        return value
    if hasattr(value, "total_seconds"):
        value = value.total_seconds()
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return f"{int(value)}s" if float(value).is_integer() else f"{value:.9f}".rstrip("0") + "s"
    return value


def duration_seconds(value: str, field: str) -> float:
    match = DURATION.match(value)
    if not match:
        raise SpecError(field, f"must be a duration in seconds such as '3600s'; got {value!r}")
    return float(value[:-1])


class Scheduling(SpecModel):
    """Timeout (default 7 days on Vertex), restart on worker restart, provisioning strategy."""

    timeout: str | None = None
    restart_job_on_worker_restart: bool | None = None
    strategy: Strategy | None = None
    disable_retries: bool | None = None
    max_wait_duration: str | None = None

    @field_validator("timeout", "max_wait_duration", mode="before")
    @classmethod
    def _durations(cls, value: Any) -> Any:
        return _duration(value)

    @field_validator("strategy", mode="before")
    @classmethod
    def _strategy_name(cls, value: Any) -> Any:
        from google.cloud.aiplatform_v1.types import custom_job  # ~1 s import: only when needed

        return enum_name(value, custom_job.Scheduling.Strategy, "strategy")

    @property
    def timeout_seconds(self) -> float | None:
        return duration_seconds(self.timeout, "timeout") if self.timeout else None

    def check(self, path: str) -> None:
        # Vertex documents 7 days as the default timeout, not as a ceiling, so only > 0 is enforced.
        if self.timeout is not None:
            seconds = duration_seconds(self.timeout, join_path(path, "timeout"))
            if seconds <= 0:
                raise SpecError(
                    join_path(path, "timeout"), f"must be positive; got {self.timeout!r}"
                )
        if self.max_wait_duration is not None:
            duration_seconds(self.max_wait_duration, join_path(path, "maxWaitDuration"))


class CustomJobSpec(SpecModel):
    """What a CustomJob (or each trial of a tuning job) runs."""

    persistent_resource_id: str | None = None
    worker_pool_specs: list[WorkerPoolSpec] = Field(default_factory=list)
    scheduling: Scheduling | None = None
    service_account: str | None = None
    network: str | None = None
    reserved_ip_ranges: list[str] | None = None
    psc_interface_config: dict[str, Any] | None = None
    base_output_directory: dict[str, Any] | None = None
    protected_artifact_location_id: str | None = None
    tensorboard: str | None = None
    enable_web_access: bool | None = None
    enable_dashboard_access: bool | None = None
    experiment: str | None = None
    experiment_run: str | None = None
    models: list[str] | None = None

    def check(self, path: str) -> None:
        pools_path = join_path(path, "workerPoolSpecs")
        pools = self.worker_pool_specs
        if not pools:
            raise SpecError(pools_path, "required: at least one worker pool (the chief)")
        if len(pools) > MAX_WORKER_POOLS:
            raise SpecError(
                pools_path,
                f"at most {MAX_WORKER_POOLS} worker pools ({', '.join(POOL_ROLES)}); "
                f"got {len(pools)}",
            )
        for index, pool in enumerate(pools):
            pool.check(join_path(pools_path, index))
        self._check_layout(pools_path)
        self._check_tpu(pools_path)
        self._check_reduction_server(pools_path)
        if self.scheduling is not None:
            self.scheduling.check(join_path(path, "scheduling"))
        self._check_output_directory(path)
        self._check_service_account(path)
        self._check_tracking(path)

    def _check_layout(self, pools_path: str) -> None:
        pools = self.worker_pool_specs
        chief = pools[0]
        if chief.is_placeholder:
            raise SpecError(join_path(pools_path, 0), "the chief pool (pool 0) cannot be empty")
        if chief.replicas not in (0, 1):  # 0 is the proto default: Vertex runs one chief
            raise SpecError(
                join_path(join_path(pools_path, 0), "replicaCount"),
                f"the chief pool (pool 0) takes exactly 1 replica; got {chief.replicas}",
            )
        for index, pool in enumerate(pools[1:], start=1):
            item = join_path(pools_path, index)
            if pool.is_placeholder:
                if index == len(pools) - 1:
                    raise SpecError(
                        item,
                        "an empty pool is only a placeholder before a later pool; remove it",
                    )
                continue
            if pool.replicas < 1:
                raise SpecError(
                    join_path(item, "replicaCount"),
                    f"pool {index} ({POOL_ROLES[index]}) needs at least 1 replica; "
                    f"got {pool.replicas}",
                )

    def _check_tpu(self, pools_path: str) -> None:
        active = [(i, p) for i, p in enumerate(self.worker_pool_specs) if not p.is_placeholder]
        tpu_pools = [i for i, p in active if p.machine_spec is not None and p.machine_spec.uses_tpu]
        if not tpu_pools:
            return
        if len(self.worker_pool_specs) != 1:
            raise SpecError(
                pools_path,
                f"a TPU job has exactly one worker pool with one replica; "
                f"got {len(self.worker_pool_specs)} pools",
            )
        if self.worker_pool_specs[0].replicas > 1:
            raise SpecError(
                join_path(join_path(pools_path, 0), "replicaCount"),
                f"a TPU job has exactly one replica; got {self.worker_pool_specs[0].replicas}",
            )

    def _check_reduction_server(self, pools_path: str) -> None:
        pools = self.worker_pool_specs
        image = catalog().reduction_server_image
        for index, pool in enumerate(pools):
            if not pool.is_reduction_server:
                continue
            item = join_path(pools_path, index)
            if index != 2:
                raise SpecError(
                    join_path(item, "containerSpec.imageUri"),
                    f"the Reduction Server image ({image}) runs only in pool 2; got pool {index}",
                )
            machine = pool.machine_spec
            if machine is not None and machine.accelerator is not None:
                raise SpecError(
                    join_path(item, "machineSpec.acceleratorType"),
                    "a Reduction Server pool runs on CPU machines: leave acceleratorType unset",
                )
            workers = pools[1] if len(pools) > 1 else None
            worker_machine = (
                workers.machine_spec if workers and not workers.is_placeholder else None
            )
            if worker_machine is None or not worker_machine.uses_gpu:
                raise SpecError(
                    join_path(pools_path, 1),
                    "Reduction Server (pool 2) needs GPU workers in pool 1: set "
                    "machineSpec.acceleratorType to one of "
                    f"{allowed(catalog().current_gpu_types())}",
                )

    def _check_output_directory(self, path: str) -> None:
        if not self.base_output_directory:
            return
        uri = self.base_output_directory.get("outputUriPrefix") or ""
        if not GCS_URI.match(uri):
            raise SpecError(
                join_path(path, "baseOutputDirectory.outputUriPrefix"),
                f"must be a gs://bucket[/path] URI; got {uri!r}",
            )

    def _check_service_account(self, path: str) -> None:
        account = self.service_account
        if account and not re.fullmatch(r"[^@\s]+@[^@\s]+\.[a-z]+", account):
            raise SpecError(
                join_path(path, "serviceAccount"),
                f"must be a service account email like name@project.iam.gserviceaccount.com; "
                f"got {account!r}",
            )

    def _check_tracking(self, path: str) -> None:
        """tensorboard, experiment and experimentRun: their formats and how they combine."""
        if self.tensorboard and not TENSORBOARD_NAME.match(self.tensorboard):
            raise SpecError(
                join_path(path, "tensorboard"),
                "must be projects/{project}/locations/{location}/tensorboards/{tensorboard}; "
                f"got {self.tensorboard!r}",
            )
        for key, value in (("experiment", self.experiment), ("experimentRun", self.experiment_run)):
            if value and not CONTEXT_NAME.match(value):
                raise SpecError(
                    join_path(path, key),
                    "must be projects/{project}/locations/{location}/metadataStores/{store}/"
                    f"contexts/{{context}}; got {value!r}",
                )
        # The SDK's CustomJob.run: "'experiment' and 'tensorboard' cannot be set together."
        if self.experiment and self.tensorboard:
            raise SpecError(
                join_path(path, "tensorboard"), "cannot be set together with experiment"
            )
        if self.experiment_run:
            self._check_run_of_experiment(path)
        for key in NEEDS_SERVICE_ACCOUNT:
            if getattr(self, key) and not self.service_account:
                raise SpecError(
                    join_path(path, "serviceAccount"),
                    f"is required when {key} is set: Vertex AI writes to the {key} as the "
                    "job's service account",
                )

    def _check_run_of_experiment(self, path: str) -> None:
        """experimentRun "can only be set when `experiment` is set" (the SDK's CustomJob.run),
        and its context ID is `{experiment-name}-{experiment-run-name}` (the reference)."""
        field = join_path(path, "experimentRun")
        if not self.experiment:
            raise SpecError(field, "can only be set when experiment is set")
        run = self.experiment_run or ""
        if not run.startswith(f"{self.experiment}-"):
            raise SpecError(
                field,
                f"must be a run of experiment {self.experiment}: "
                f"{self.experiment}-{{experiment-run-name}}; got {run!r}",
            )

    def with_defaults(self) -> CustomJobSpec:
        """The spec as Vertex stores it (default boot disks filled in)."""
        pools = [pool.with_defaults() for pool in self.worker_pool_specs]
        return self.model_copy(update={"worker_pool_specs": pools})


def validate_custom_job_spec(spec: dict[str, Any], path: str = "") -> CustomJobSpec:
    """Checks a CustomJobSpec's REST JSON (camelCase); returns it parsed or raises SpecError."""
    return CustomJobSpec.from_api(spec, path)


__all__ = [
    "STRATEGIES",
    "ContainerSpec",
    "CustomJobSpec",
    "EnvVar",
    "PythonPackageSpec",
    "Scheduling",
    "WorkerPoolSpec",
    "duration_seconds",
    "validate_custom_job_spec",
]
