"""Vertex names every resource and operation with the project NUMBER
(`projects/471889570513/locations/...`), whatever the caller sent, and takes the ID or the
number in a request (recorded Vertex traffic, GoogleCloudPlatform/k8s-config-connector
`.../vertexai/.../vertexaitensorboard/_http.log`: created with `projects/${projectId}`,
answered and polled as `projects/${projectNumber}`).

The local store keys resources by the project ID, as it always has (so a home written before
keeps working): requests are read inward (a number the local cloud has given out becomes its
ID) and answers written outward (every resource name that starts with `projects/<ID>` carries
the number), at the Vertex router, so no handler sees the difference.

A JSON body is walked, not rewritten as text: what a user wrote in a free-form field (an
artifact's `metadata` Struct, `labels`, a pipeline's `parameterValues`, a `description`) is
data, and Vertex gives it back as written (Google's system test
`test_e2e_metadata_schema.py::test_google_dataset_artifact_create`: a VertexDataset artifact's
`metadata.resourceName` `projects/<ID>/...` comes back with the ID). Names in every other field
carry the number (k8s-config-connector `vertexaipipelinejob-maximal/_http.log`: the job's
`name`, its contexts' `name` and `parentContexts` answered as `projects/${projectNumber}`).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterable
from typing import Any

from vertexkit.local.projects import project_number

# A resource name wherever it stands (a JSON value, a filter's quoted name, a query value, an
# error message), but not inside another path or word (`gs://b/projects/x`, `myprojects/x`).
OUTWARD = re.compile(r"(?<![\w/.-])projects/([a-z][-a-z0-9]{4,28}[a-z0-9])(?![\w-])")
# In a page: also a name in a URL path (`href="/console/projects/<id>/..."`).
SHOWN = re.compile(r"(?<![\w.-])projects/([a-z][-a-z0-9]{4,28}[a-z0-9])(?![\w-])")
INWARD = re.compile(r"(?<![\w/.-])projects/(\d{6,20})(?![\w-])")

# JSON keys of the `aiplatform_v1` fields whose type is free-form (google.protobuf.Struct,
# Value, ListValue, or a map of scalars/Values): user data, never renamed. Generated from the
# descriptors (`free_form_keys()`, held by core_test); a key free-form in one message and a
# message in another is free-form here, except `inputs` (below). `metadata` is a Struct on
# artifacts, executions and contexts but an Any on an operation: an object with `@type` is an
# Any and is walked wherever it stands.
FREE_FORM_KEYS = frozenset({
    "accessUris", "additionalConfig", "additionalProperties", "annotationLabels", "args",
    "artifactDelta", "buildArgs", "classMethods", "customConfigs", "customMetadata",
    "dataItemLabels", "dataItemPayload", "default", "embeddingMetadata", "encodedBaselines",
    "example", "featureAttributions", "fields", "groundTruths", "indexDisplayNameMapping",
    "input", "inputBaselines", "inputs", "instances", "labels", "listValue", "metadata",
    "metricSpecParameters", "metrics", "modelParameters", "nearestNeighborSearchConfig",
    "output", "outputIndices", "parameterValues", "parameters", "parametersJsonSchema",
    "payload", "pipelineSpec", "predictions", "protoStruct", "rawEvent",
    "requestedAuthConfigs", "resourceLimits", "resourcePoolImages", "response",
    "responseJsonSchema", "samplePredictInstance", "sessionState", "stateDelta", "structValue",
    "systemLabels", "trafficSplit", "trainingTaskInputs", "trainingTaskMetadata", "value",
    "values", "webAccessUris",
})  # fmt: skip
# Free-form somewhere but walked: a pipeline task's `inputs` are artifacts Vertex names (a
# Value only on DataLabelingJob, not served here); a training pipeline's `trainingTaskMetadata`
# is Vertex's own output (`backingCustomJob` named by number).
WALKED_KEYS = frozenset({"inputs", "trainingTaskMetadata"})
# Maps of messages keyed by the user's names: a pipeline task's `inputs` and `outputs`
# (PipelineTaskDetail: map<string, ArtifactList>), whose artifacts Vertex names by number.
MESSAGE_MAPS = frozenset({"inputs", "outputs"})
# Strings a user writes as text or as a process's command line, given back as written.
TEXT_KEYS = frozenset({"displayName", "description", "command", "env"})
KEPT_KEYS = (FREE_FORM_KEYS - WALKED_KEYS) | TEXT_KEYS


class ProjectNames:
    """The projects' numbers, both ways; every ID seen is remembered with its number."""

    def __init__(self, known: Iterable[str]) -> None:
        self._lock = threading.Lock()
        self._id_by_number = {project_number(project): project for project in known}

    def number(self, project_id: str) -> str:
        number = project_number(project_id)
        with self._lock:
            self._id_by_number.setdefault(number, project_id)
        return number

    def project_id(self, number: str) -> str | None:
        with self._lock:
            return self._id_by_number.get(number)

    def inward_text(self, text: str) -> str:
        """Resource names in a request (its path, query, body), each as the store keys it:
        `projects/<number>` -> `projects/<id>` for a number given out here (an unknown number
        stays, and finds nothing: a 404, as on Vertex)."""
        return INWARD.sub(lambda m: f"projects/{self.project_id(m.group(1)) or m.group(1)}", text)

    def outward_text(self, text: str) -> str:
        """Resource names in an answer (or an error's message), each with its project's number."""
        return OUTWARD.sub(lambda m: f"projects/{self.number(m.group(1))}", text)

    def outward(self, value: Any) -> Any:
        """An answer's JSON value with its resource names carrying the number; user data kept."""
        return _renamed(value, self.outward_text)

    def inward(self, value: Any) -> Any:
        """A request body's JSON value with its names as the store keys them; user data kept."""
        return _renamed(value, self.inward_text)

    def shown_text(self, text: str) -> str:
        """A console page's names and links, as Vertex names the resources they show."""
        return SHOWN.sub(lambda m: f"projects/{self.number(m.group(1))}", text)


def _renamed(value: Any, rename: Callable[[str], str]) -> Any:
    """`value` with `rename` applied to every string outside the kept keys; a new value where
    something changed (the store's own objects are never touched)."""
    if isinstance(value, str):
        return rename(value) if "projects/" in value else value
    if isinstance(value, dict):
        return {key: _renamed_field(key, item, rename) for key, item in value.items()}
    if isinstance(value, list):
        return [_renamed(item, rename) for item in value]
    return value


def _renamed_field(key: str, item: Any, rename: Callable[[str], str]) -> Any:
    if key in MESSAGE_MAPS and isinstance(item, dict):
        # the map's keys are the user's own names (an output called `metrics`), not fields
        return {name: _renamed(entry, rename) for name, entry in item.items()}
    if key in KEPT_KEYS and not _is_any(item):
        return item
    return _renamed(item, rename)


def _is_any(value: Any) -> bool:
    """A google.protobuf.Any in JSON (an operation's `metadata` and `response`): a message."""
    return isinstance(value, dict) and "@type" in value


def free_form_keys() -> set[str]:
    """The JSON keys of free-form fields in every `aiplatform_v1` message (slow: loads every
    type; FREE_FORM_KEYS holds its result)."""
    import proto
    from google.cloud.aiplatform_v1 import types

    free: set[str] = set()
    seen: set[str] = set()
    for name in dir(types):
        message = getattr(types, name)
        if isinstance(message, type) and issubclass(message, proto.Message):
            _collect_free(message.pb().DESCRIPTOR, free, seen)
    return free


FREE_TYPES = {"google.protobuf.Struct", "google.protobuf.Value", "google.protobuf.ListValue"}


def _collect_free(descriptor: Any, free: set[str], seen: set[str]) -> None:
    if descriptor.full_name in seen:
        return
    seen.add(descriptor.full_name)
    for field in descriptor.fields:
        message = field.message_type
        if message is None:
            continue
        if message.full_name in FREE_TYPES or _is_free_map(message):
            free.add(field.json_name)
        _collect_free(message, free, seen)
    for nested in descriptor.nested_types:
        _collect_free(nested, free, seen)


def _is_free_map(message: Any) -> bool:
    """A map whose values are scalars or free-form (`labels`), not messages (`inputs`)."""
    if not message.GetOptions().map_entry:
        return False
    value = message.fields_by_name["value"].message_type
    return value is None or value.full_name in FREE_TYPES
