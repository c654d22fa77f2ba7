"""The serving fields of a Model's `containerSpec` and of a `DeployedModel`, each given a local
meaning: honoured, accepted with no local effect (a note the deploy operation or the job's log
carries), or refused here with the field and the reason.

Google's semantics (REST reference, ModelContainerSpec / Probe / DedicatedResources):

* `ports`: "Vertex AI sends any prediction requests that it receives to the first port on this
  list ... does not use ports other than the first one listed"; default `[{"containerPort":
  8080}]`. Honoured by `serving.ContainerServer` (the first port, when free on 127.0.0.1).
* `grpcPorts`: "Vertex AI sends gRPC prediction requests ... to the first port on this list".
  The local cloud answers REST only, so no gRPC request ever reaches a container: refused.
* `invokeRoutePrefix`: "any non-root route on this model will be accessible with invoke http
  call ... the Model can only be deployed to dedicated endpoint". The local cloud serves no
  `invoke` route nor dedicated endpoints: refused.
* `startupProbe` / `healthProbe` (Kubernetes startup and readiness probes): exec, httpGet and
  tcpSocket are run against the local process (`serving.run_probe`); grpc needs a gRPC health
  client the local cloud does not have: refused. periodSeconds defaults to 10, timeoutSeconds
  to 1, failureThreshold to 3, successThreshold to 1, initialDelaySeconds to 0.
* `livenessProbe`: Kubernetes restarts a container whose liveness probe fails; locally nothing
  probes a running container (a dead one is started again by the next prediction): a note.
* `deploymentTimeout` ("Limit for deployment timeout is 2 hours"): honoured, the deploy fails
  after it. `sharedMemorySizeMb`: the local process shares the machine's /dev/shm: a note.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vertexkit.specs.errors import SpecError, join_path

MAX_DEPLOYMENT_SECONDS = 2 * 3600  # ModelContainerSpec.deployment_timeout: "Limit ... 2 hours"
PROBES = ("startupProbe", "healthProbe", "livenessProbe")
PROBE_ACTIONS = ("exec", "httpGet", "tcpSocket", "grpc")
LOOPBACK_HOSTS = ("", "localhost", "127.0.0.1")
# Probe defaults from the REST reference (Probe).
PROBE_DEFAULTS = {
    "periodSeconds": 10,
    "timeoutSeconds": 1,
    "failureThreshold": 3,
    "successThreshold": 1,
    "initialDelaySeconds": 0,
}


def duration_seconds(value: Any) -> float:
    """A google.protobuf.Duration as JSON ("30s", "1.5s") in seconds."""
    return float(str(value).rstrip("s") or 0)


# -- refusals ----------------------------------------------------------------------------------
def validate_container_spec(spec: Mapping[str, Any], field: str = "model.containerSpec") -> None:
    """Raises SpecError for a serving field the local cloud cannot carry out."""
    if spec.get("grpcPorts"):
        raise SpecError(
            join_path(field, "grpcPorts"),
            "the local cloud answers prediction over REST only and never sends a gRPC request "
            "to a container; give an HTTP port in ports instead",
        )
    if spec.get("invokeRoutePrefix"):
        raise SpecError(
            join_path(field, "invokeRoutePrefix"),
            "the local cloud serves no invoke routes (they need a dedicated endpoint); use "
            "predictRoute",
        )
    for index, port in enumerate(spec.get("ports") or []):
        _check_port(port.get("containerPort"), join_path(join_path(field, "ports"), index))
    timeout = spec.get("deploymentTimeout")
    if timeout is not None and not 0 < duration_seconds(timeout) <= MAX_DEPLOYMENT_SECONDS:
        raise SpecError(
            join_path(field, "deploymentTimeout"),
            f"must be more than 0 s and at most 2 hours; got {timeout}",
        )
    for name in PROBES:
        if spec.get(name):
            _check_probe(spec[name], join_path(field, name))


def _check_port(port: Any, field: str) -> None:
    if not isinstance(port, int) or not 1 <= port <= 65535:
        raise SpecError(join_path(field, "containerPort"), f"must be 1..65535; got {port!r}")


def _check_probe(probe: Mapping[str, Any], field: str) -> None:
    actions = [action for action in PROBE_ACTIONS if action in probe]
    if len(actions) != 1:
        raise SpecError(field, f"set exactly one of exec, httpGet, tcpSocket; got {actions}")
    action = actions[0]
    if action == "grpc":
        raise SpecError(
            join_path(field, "grpc"),
            "the local cloud has no gRPC health client to run this probe; use httpGet, exec "
            "or tcpSocket",
        )
    _check_action(action, probe[action], join_path(field, action))
    for name in PROBE_DEFAULTS:
        minimum = 0 if name == "initialDelaySeconds" else 1
        value = probe.get(name)
        if value is not None and int(value) < minimum:
            raise SpecError(join_path(field, name), f"must be >= {minimum}; got {value}")


def _check_action(action: str, body: Mapping[str, Any], field: str) -> None:
    if action == "exec" and not body.get("command"):
        raise SpecError(join_path(field, "command"), "required: the command to run")
    if action in ("httpGet", "tcpSocket"):
        if body.get("port") is not None:
            _check_probe_port(body["port"], join_path(field, "port"))
        if (body.get("host") or "") not in LOOPBACK_HOSTS:
            raise SpecError(
                join_path(field, "host"),
                f"locally the container is this machine's process on 127.0.0.1; a probe of "
                f"another host ({body['host']!r}) would not probe it. Leave host unset",
            )
    if action == "httpGet" and (body.get("scheme") or "HTTP") not in ("HTTP", "HTTPS"):
        raise SpecError(join_path(field, "scheme"), f"allowed: HTTP, HTTPS; got {body['scheme']!r}")


def _check_probe_port(port: Any, field: str) -> None:
    if not isinstance(port, int) or not 1 <= port <= 65535:
        raise SpecError(field, f"must be 1..65535; got {port!r}")


# -- accepted, with no local effect ------------------------------------------------------------
def container_notes(spec: Mapping[str, Any], prebuilt: bool) -> list[str]:
    """What of `spec` has no local effect, each a sentence naming the field."""
    notes = []
    if prebuilt:
        # The prebuilt image's model is loaded by the local cloud itself: no container runs.
        for name in ("ports", *PROBES, "deploymentTimeout"):
            if spec.get(name):
                notes.append(
                    f"containerSpec.{name}: no local effect; the prebuilt image's model is "
                    "loaded by the local cloud itself, no container runs"
                )
    else:
        if len(spec.get("ports") or []) > 1:
            notes.append(
                "containerSpec.ports[1:]: no effect, as on Vertex (only the first port is used)"
            )
        if spec.get("livenessProbe"):
            notes.append(
                "containerSpec.livenessProbe: not run locally; nothing probes a running "
                "container (a stopped one starts again on the next prediction)"
            )
        if spec.get("healthProbe"):
            notes.append(
                "containerSpec.healthProbe: run until the container is ready at deploy; not "
                "run again afterwards"
            )
    if spec.get("sharedMemorySizeMb"):
        notes.append(
            f"containerSpec.sharedMemorySizeMb ({spec['sharedMemorySizeMb']}): no local "
            "effect; the local process shares this machine's /dev/shm"
        )
    return notes


def deployed_model_notes(deployed: Mapping[str, Any], prebuilt: bool = True) -> list[str]:
    """The replica and machine fields of a DeployedModel: a custom container runs
    minReplicaCount servers behind the endpoint (in turn); a prebuilt model is one local model
    process, whatever the count; never scaled beyond it."""
    notes = []
    dedicated = deployed.get("dedicatedResources") or {}
    field = "deployedModel.dedicatedResources"
    minimum = int(dedicated.get("minReplicaCount") or 0)
    if minimum > 1 and prebuilt:
        notes.append(
            f"{field}.minReplicaCount ({minimum}): one local model process stands for them "
            "(each replica of a prebuilt image loads the same artifact and answers the same)"
        )
    maximum = int(dedicated.get("maxReplicaCount") or 0)
    if maximum > max(minimum, 1):
        notes.append(f"{field}.maxReplicaCount ({maximum}): no autoscaling locally")
    if dedicated.get("autoscalingMetricSpecs"):
        notes.append(f"{field}.autoscalingMetricSpecs: no autoscaling locally")
    required = int(dedicated.get("requiredReplicaCount") or 0)
    if required > 1:
        notes.append(
            f"{field}.requiredReplicaCount ({required}): the deploy succeeds once the one local "
            "server is ready"
        )
    if dedicated.get("spot"):
        notes.append(f"{field}.spot: no local effect; the server runs on this machine")
    accelerator = (dedicated.get("machineSpec") or {}).get("acceleratorType")
    if accelerator:
        notes.append(f"{field}.machineSpec.acceleratorType ({accelerator}): served on this CPU")
    automatic = deployed.get("automaticResources") or {}
    for name in ("minReplicaCount", "maxReplicaCount"):
        if int(automatic.get(name) or 0) > 1:
            notes.append(
                f"deployedModel.automaticResources.{name} ({automatic[name]}): one local "
                "server, never scaled"
            )
    return notes
