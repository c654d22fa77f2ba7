"""One executor task of the PipelineSpec IR: its executor input, its command, its outputs.

What the KFP backend's driver (`backend/src/v2/driver/driver.go`, `resolve.go`) and launcher
(`backend/src/v2/component/launcher_v2.go`) do for a container executor, done here:
- the executor input: input parameters and artifacts as resolved, each output artifact planned
  at a `gs://` URI under the pipeline root, each output parameter's file and the executor
  output file;
- the command and args with KFP's placeholders resolved (`{{$}}`, `{{$.inputs...}}`,
  `{{$.outputs...}}`, `IfPresent`, `Concat`) and Vertex's system placeholders;
- the outputs read back: `executor_output.json` (parameter values, artifacts' metadata, a
  `custom_path` whose files become the artifact's), else each output parameter's file;
- the cache key as the backend computes it (`backend/src/v2/cacheutils/cache.go`,
  `GenerateCacheKey`): inputs, output specs, image and the unresolved command and args.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

from vertexkit.local.vertex.pipelines import placeholders

ArtifactList = list[dict[str, Any]]
# Every KFP placeholder of a command line, in one pattern, so one pass replaces them all and
# nothing a replacement inserts is read again: the executor input `{{$.json_escape[N]}}` inserts
# holds the inner component's own placeholders (GCPC's custom job payload), which are its
# launcher's to resolve, not this task's.
_PLACEHOLDER = re.compile(
    r"\{\{\$\.inputs\.parameters\['(?P<in_param>[^']+)'\]\}\}"
    r"|\{\{\$\.inputs\.artifacts\['(?P<in_art>[^']+)'\]\.(?P<in_part>uri|path|metadata)"
    r"(?:\['(?P<in_key>[^']+)'\])?\}\}"
    r"|\{\{\$\.outputs\.artifacts\['(?P<out_art>[^']+)'\]\.(?P<out_part>uri|path|metadata)"
    r"(?:\['(?P<out_key>[^']+)'\])?\}\}"
    r"|\{\{\$\.outputs\.parameters\['(?P<out_param>[^']+)'\]\.output_file\}\}"
    r"|(?P<out_file>\{\{\$\.outputs\.output_file\}\})"
    r"|\{\{\$\.json_escape\[(?P<escape>\d)\]\}\}"
    r"|(?P<whole>\{\{\$\}\})"
)


@dataclass
class TaskIO:
    """A task's resolved inputs, and what it produced (or was served from the cache)."""

    parameters: dict[str, Any] = field(default_factory=dict)
    artifacts: dict[str, ArtifactList] = field(default_factory=dict)


@dataclass
class Storage:
    """Where `gs://` URIs live on this machine: the folder holding every bucket."""

    mount: str | None

    def path(self, uri: str) -> str:
        if self.mount and uri.startswith("gs://"):
            return self.mount.rstrip("/") + "/" + uri.removeprefix("gs://")
        return uri


def whole_numbers_as_int(value: Any) -> Any:
    """`{"n": 20.0, "r": 0.5}` -> `{"n": 20, "r": 0.5}`, through lists and dicts (Vertex's
    launcher prints a protobuf number 20.0 as `20`)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, list):
        return [whole_numbers_as_int(item) for item in value]
    if isinstance(value, dict):
        return {key: whole_numbers_as_int(item) for key, item in value.items()}
    return value


def typed_value(value: Any, parameter_type: str | None) -> Any:
    """A parameter value as its declared type reads it (protobuf Values carry 3 as 3.0)."""
    if parameter_type == "NUMBER_INTEGER" and isinstance(value, float) and value.is_integer():
        return int(value)
    if parameter_type in ("LIST", "STRUCT"):
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except ValueError:
                return value
        return whole_numbers_as_int(value)
    return value


def typed_parameters(declared: dict[str, Any], values: dict[str, Any]) -> dict[str, Any]:
    """Each value as its declared parameter reads it (`typed_value`)."""
    return {
        name: typed_value(value, declared.get(name, {}).get("parameterType"))
        for name, value in values.items()
    }


def planned_outputs(component: dict[str, Any], task_uri: str) -> dict[str, ArtifactList]:
    """Each declared output artifact at TASK_URI/NAME, as Vertex's driver plans them."""
    declared = component.get("outputDefinitions", {}).get("artifacts", {})
    planned: dict[str, ArtifactList] = {}
    for name, spec in declared.items():
        schema = spec.get("artifactType", {})
        planned[name] = [
            {
                "name": f"{task_uri}/{name}",
                "uri": f"{task_uri}/{name}",
                "type": {
                    "schemaTitle": schema.get("schemaTitle", "system.Artifact"),
                    "schemaVersion": schema.get("schemaVersion", "0.0.1"),
                },
                "metadata": {},
            }
        ]
    return planned


def executor_input(
    inputs: TaskIO, outputs: dict[str, ArtifactList], component: dict[str, Any], task_dir: Path
) -> dict[str, Any]:
    declared_parameters = component.get("outputDefinitions", {}).get("parameters", {})
    return {
        "inputs": {
            "parameterValues": inputs.parameters,
            "artifacts": {name: {"artifacts": listed} for name, listed in inputs.artifacts.items()},
        },
        "outputs": {
            "parameters": {
                name: {"outputFile": str(task_dir / "parameters" / name)}
                for name in declared_parameters
            },
            "artifacts": {name: {"artifacts": listed} for name, listed in outputs.items()},
            "outputFile": str(task_dir / "executor_output.json"),
        },
    }


def cache_key(
    inputs: TaskIO, component: dict[str, Any], container: dict[str, Any], task: dict[str, Any]
) -> str:
    """The fingerprint the KFP backend gives a task (`backend/src/v2/driver/cache.go`,
    `getFingerPrint`; `backend/src/v2/cacheutils/cache.go`, `GenerateCacheKey` and
    `GenerateFingerPrint`): with `cachingOptions.cacheKey` set, SHA-256 of the component's name,
    a NUL and that key; else SHA-256 of the CacheKey message as protojson, re-marshalled by Go's
    encoding/json (keys sorted, no spaces), hex. Inputs are the resolved executor inputs (an
    input artifact by its name), outputs their spec with the URI wiped (`Name` is the output's
    name, `provisionOutputs`), the image and the command and args as the component writes them."""
    custom = (task.get("cachingOptions") or {}).get("cacheKey")
    if custom:
        name = (task.get("componentRef") or {}).get("name", "")
        prefix = name.encode() + b"\0" if name else b""
        return hashlib.sha256(prefix + custom.encode()).hexdigest()
    outputs = component.get("outputDefinitions") or {}
    key = _without_empty(
        {
            "inputArtifactNames": {
                name: _without_empty({"artifactNames": [a.get("name", "") for a in listed]})
                for name, listed in inputs.artifacts.items()
            },
            "inputParameterValues": inputs.parameters,
            "outputArtifactsSpec": {
                name: _without_empty(
                    {
                        "name": name,
                        "type": spec.get("artifactType") or {},
                        "metadata": spec.get("metadata"),
                    }
                )
                for name, spec in (outputs.get("artifacts") or {}).items()
            },
            "outputParametersSpec": {
                name: spec.get("parameterType", "PARAMETER_TYPE_ENUM_UNSPECIFIED")
                for name, spec in (outputs.get("parameters") or {}).items()
            },
            "containerSpec": _without_empty(
                {
                    "image": container.get("image", ""),
                    "cmdArgs": [*(container.get("command") or []), *(container.get("args") or [])],
                }
            ),
        }
    )
    return hashlib.sha256(go_json(key).encode()).hexdigest()


def _without_empty(message: dict[str, Any]) -> dict[str, Any]:
    """protojson leaves out a field at its default: an empty string, list or map, an unset
    message (a Struct field that is set stays, even empty)."""
    return {k: v for k, v in message.items() if v is not None and v != "" and v != [] and v != {}}


def go_json(value: Any) -> str:
    """`value` as Go's `json.Marshal` writes an `interface{}` read from protojson: map keys
    sorted, no spaces, every number a float64 in Go's shortest form (`3`, `0.5`, `1e-7`),
    `<`, `>`, `&` and U+2028/U+2029 escaped, other text as UTF-8."""
    if isinstance(value, dict):
        items = sorted(value.items())
        return "{" + ",".join(f"{go_json(str(k))}:{go_json(v)}" for k, v in items) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(go_json(v) for v in value) + "]"
    if isinstance(value, str):
        text = json.dumps(value, ensure_ascii=False)
        for char, escaped in _GO_ESCAPES.items():
            text = text.replace(char, escaped)
        return text
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return _go_float(float(value))
    return go_json(str(value))


_GO_ESCAPES = {
    "<": "\\u003c",
    ">": "\\u003e",
    "&": "\\u0026",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
}


def _go_float(number: float) -> str:
    """Go's encoding/json float64: the shortest digits, in 'f' form, or 'e' below 1e-6 and
    from 1e21 on, a negative exponent's leading zero dropped (`1e-7`, `1e+21`)."""
    magnitude = abs(number)
    if magnitude != 0 and (magnitude < 1e-6 or magnitude >= 1e21):
        mantissa, exponent = f"{number!r}".split("e")
        digits = exponent[1:].lstrip("0")
        return f"{mantissa}e{exponent[0]}{digits.rjust(2 if exponent[0] == '+' else 1, '0')}"
    if number.is_integer():
        return str(int(number))
    return format(Decimal(repr(number)), "f")  # Python's repr may be 1.5e-05: Go writes digits


class CommandResolver:
    """KFP's command-line placeholders, against one task's executor input."""

    def __init__(self, executor: dict[str, Any], storage: Storage, system: dict[str, str]) -> None:
        self.executor = executor
        self.storage = storage
        self.system = system  # Vertex's pipeline and task placeholders -> values

    def resolve_all(self, parts: list[Any]) -> list[str]:
        resolved: list[str] = []
        for part in parts:
            resolved += self.resolve_part(part)
        return resolved

    def resolve_part(self, part: Any) -> list[str]:
        """One element of command or args: a string, or IfPresent/Concat (as JSON text)."""
        structured = _structured(part)
        if structured is None:
            return [self.resolve_text(part)]
        if "IfPresent" in structured:
            clause = structured["IfPresent"]
            present = self._present(clause["InputName"])
            branch = clause.get("Then" if present else "Else") or []
            return self.resolve_all(branch if isinstance(branch, list) else [branch])
        if "Concat" in structured:
            return ["".join("".join(self.resolve_part(p)) for p in structured["Concat"])]
        return [self.resolve_text(part)]

    def _present(self, name: str) -> bool:
        inputs = self.executor["inputs"]
        return name in inputs["parameterValues"] or name in inputs["artifacts"]

    def resolve_text(self, text: str) -> str:
        """A string with every placeholder in it replaced, in one pass. A parameter's value
        may itself hold this task's placeholders (GCPC's worker pool specs hold
        `{{$.pipeline_google_cloud_project_id}}` and `{{$.json_escape[1]}}`): those are
        resolved in the value, and nothing else in it."""
        text = placeholders.resolve(text, self.system)
        return _PLACEHOLDER.sub(self._replacement, text)

    def _replacement(self, match: re.Match[str]) -> str:
        inputs, outputs = self.executor["inputs"], self.executor["outputs"]
        if match["in_param"] is not None:
            # An optional input left unset is JSON null, as kfp's own placeholder resolution
            # gives it: GCPC's payloads hold `"labels": {{$.inputs.parameters['labels']}}`.
            return self._parameter(inputs["parameterValues"].get(match["in_param"]))
        if match["in_art"] is not None:
            return self._artifact(
                inputs["artifacts"], match["in_art"], match["in_part"], match["in_key"]
            )
        if match["out_art"] is not None:
            return self._artifact(
                outputs["artifacts"], match["out_art"], match["out_part"], match["out_key"]
            )
        if match["out_param"] is not None:
            return outputs["parameters"][match["out_param"]]["outputFile"]
        if match["out_file"] is not None:
            return outputs["outputFile"]
        if match["escape"] is not None:
            return placeholders.escaped_executor_input(self.executor, int(match["escape"]))
        return json.dumps(self.executor)  # {{$}}

    def _parameter(self, value: Any) -> str:
        text = placeholders.resolve(_text(value), self.system)
        return placeholders.resolve_escaped_executor_input(text, self.executor)

    def _artifact(
        self, artifacts: dict[str, Any], name: str, part: str, key: str | None = None
    ) -> str:
        """`.uri`, `.path`, `.metadata` or one metadata value, `.metadata['resourceName']`
        (GCPC's upload reads its parent model's name so)."""
        listed = artifacts.get(name, {}).get("artifacts") or [{}]
        artifact = listed[0]
        if part == "metadata":
            metadata = artifact.get("metadata", {})
            return json.dumps(metadata) if key is None else _text(metadata.get(key))
        uri = artifact.get("uri", "")
        return uri if part == "uri" else self.storage.path(uri)


def _structured(part: Any) -> dict[str, Any] | None:
    if isinstance(part, dict):
        return part
    if (
        isinstance(part, str)
        and part.startswith('{"')
        and ('"IfPresent"' in part or '"Concat"' in part)
    ):
        try:
            value = json.loads(part)
        except ValueError:
            return None
        return value if isinstance(value, dict) else None
    return None


def _text(value: Any) -> str:
    """A parameter on a command line: a string as it is, anything else as JSON."""
    return value if isinstance(value, str) else json.dumps(value)


def read_outputs(executor: dict[str, Any], component: dict[str, Any], storage: Storage) -> TaskIO:
    """What the task produced: the executor output file, else each parameter's own file."""
    written: dict[str, Any] = {}
    output_file = Path(executor["outputs"]["outputFile"])
    if output_file.is_file():
        written = json.loads(output_file.read_text() or "{}")
    declared = component.get("outputDefinitions", {}).get("parameters", {})
    produced = TaskIO()
    values = written.get("parameterValues") or {}
    for name, spec in declared.items():
        kind = spec.get("parameterType")
        if name in values:
            produced.parameters[name] = typed_value(values[name], kind)
            continue
        path = Path(executor["outputs"]["parameters"][name]["outputFile"])
        if path.is_file():
            produced.parameters[name] = _parse_parameter_file(path.read_text(), kind)
    for name, entry in executor["outputs"]["artifacts"].items():
        reported = (written.get("artifacts") or {}).get(name, {}).get("artifacts") or []
        produced.artifacts[name] = [
            _merge_artifact(planned, reported[i] if i < len(reported) else {}, storage)
            for i, planned in enumerate(entry["artifacts"])
        ]
    return produced


def _merge_artifact(planned: dict[str, Any], reported: dict[str, Any], storage: Storage) -> dict:
    """The planned artifact with what the executor reported: its metadata, and the files at a
    custom path (`Artifact.set_path`) put where its URI is, as the launcher uploads them."""
    metadata = {**planned.get("metadata", {}), **(reported.get("metadata") or {})}
    # a component may point its artifact elsewhere (`artifact.uri = ...`): Vertex keeps that URI
    merged = {**planned, "uri": reported.get("uri") or planned["uri"], "metadata": metadata}
    custom = reported.get("custom_path")
    if custom and Path(custom).exists():
        target = Path(storage.path(planned["uri"]))
        target.parent.mkdir(parents=True, exist_ok=True)
        if Path(custom).is_dir():
            shutil.copytree(custom, target, dirs_exist_ok=True)
        elif Path(custom).resolve() != target.resolve():
            shutil.copyfile(custom, target)
    return merged


def _parse_parameter_file(text: str, kind: str | None) -> Any:
    if kind in (None, "STRING"):
        return text
    try:
        return typed_value(json.loads(text), kind)
    except ValueError:
        return text.strip() if kind != "BOOLEAN" else text.strip().lower() == "true"


def importer_outputs(spec: dict[str, Any], inputs: TaskIO) -> dict[str, ArtifactList]:
    """An importer's one output, `artifact`, at the URI it names (a constant or a parameter)."""
    uri_spec = spec.get("artifactUri", {})
    if "runtimeParameter" in uri_spec:
        uri = str(inputs.parameters.get(uri_spec["runtimeParameter"], ""))
    else:
        constant = uri_spec.get("constant", uri_spec.get("constantValue", ""))
        uri = constant.get("stringValue", "") if isinstance(constant, dict) else str(constant)
    if "uri" in inputs.parameters and not uri:
        uri = str(inputs.parameters["uri"])
    schema = spec.get("typeSchema", {})
    return {
        "artifact": [
            {
                "name": uri,
                "uri": uri,
                "type": {
                    "schemaTitle": schema.get("schemaTitle", "system.Artifact"),
                    "schemaVersion": schema.get("schemaVersion", "0.0.1"),
                },
                "metadata": dict(spec.get("metadata") or {}),
            }
        ]
    }
