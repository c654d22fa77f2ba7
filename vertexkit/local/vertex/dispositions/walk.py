"""Walks the `aiplatform_v1` descriptors of each request's resource message, field by field.

OUTPUT_ONLY comes from `google.api.field_behavior` in the field options when the descriptor
carries them. The proto-plus types `aiplatform_v1` ships build their descriptors WITHOUT field
options (`has_options` is False on every field), so the fallback is the behaviour prefix the
generator copies from the proto comment into the class docstring ("Output only. ..."): googleapis
writes that prefix from the same annotation, and it tracks the installed client release.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import pkgutil
import re
from collections.abc import Iterator
from typing import Any

import proto
from google.api import field_behavior_pb2
from google.protobuf.descriptor import Descriptor, FieldDescriptor

from vertexkit.local.vertex.dispositions.model import FieldRef

# The resource message each in-scope create/update request carries (Model: upload; DeployedModel:
# deployModel; Trial: createTrial), in the order the report lists them.
ROOTS = (
    "CustomJob",
    "HyperparameterTuningJob",
    "TrainingPipeline",
    "Model",
    "Endpoint",
    "DeployedModel",
    "BatchPredictionJob",
    "Dataset",
    "DatasetVersion",
    "PipelineJob",
    "Schedule",
    "Study",
    "Trial",
    "PersistentResource",
    "DeploymentResourcePool",
    "Tensorboard",
    "TensorboardExperiment",
    "TensorboardRun",
    "TensorboardTimeSeries",
    "Context",
    "Artifact",
    "Execution",
    "MetadataStore",
    "MetadataSchema",
)
# Leaves: well-known types (Timestamp, Duration, Struct, Value...) are values, not messages.
LEAF_PREFIXES = ("google.protobuf.",)
BEHAVIOUR_WORDS = ("Required.", "Optional.", "Immutable.", "Input only.", "Identifier.")
ATTRIBUTE = re.compile(r"^    (\w+) \(.*\):\s*$")


def types_module() -> Any:
    from google.cloud import aiplatform_v1  # ~1 s import: only when walked

    return aiplatform_v1


def root_descriptor(name: str) -> Descriptor:
    return getattr(types_module(), name).pb().DESCRIPTOR


@functools.cache
def proto_plus_classes() -> dict[str, type[proto.Message]]:
    """Every proto-plus message class of aiplatform_v1.types (nested ones too), by full name."""
    package = importlib.import_module("google.cloud.aiplatform_v1.types")
    classes: dict[str, type[proto.Message]] = {}
    for info in pkgutil.iter_modules(package.__path__):
        _collect(importlib.import_module(f"{package.__name__}.{info.name}"), classes)
    return classes


def _collect(scope: Any, classes: dict[str, type[proto.Message]]) -> None:
    for value in vars(scope).values():
        if isinstance(value, type) and issubclass(value, proto.Message):
            full_name = value.pb().DESCRIPTOR.full_name
            if full_name not in classes:
                classes[full_name] = value
                _collect(value, classes)


@functools.cache
def documented_attributes(full_name: str) -> dict[str, str]:
    """The `Attributes:` section of a message class's docstring: field name -> its text."""
    cls = proto_plus_classes().get(full_name)
    doc = (inspect.getdoc(cls) or "") if cls else ""
    _, _, section = doc.partition("Attributes:")
    attributes: dict[str, list[str]] = {}
    current = None
    for line in section.splitlines():
        match = ATTRIBUTE.match(line)
        if match:
            current = attributes.setdefault(match.group(1), [])
        elif current is not None and line.startswith("        "):
            current.append(line.strip())
    return {name: " ".join(text) for name, text in attributes.items()}


def is_output_only(message: Descriptor, field: FieldDescriptor) -> bool:
    if field.has_options:
        behaviours = field.GetOptions().Extensions[field_behavior_pb2.field_behavior]
        if behaviours:
            return field_behavior_pb2.OUTPUT_ONLY in behaviours
    text = documented_attributes(message.full_name).get(field.name, "")
    # "Optional. Output only." / "Required. Output only." occur: skip the other behaviour words.
    while text.startswith(BEHAVIOUR_WORDS):
        text = text.split(".", 1)[1].lstrip()
    return text.startswith("Output only")


def child_message(field: FieldDescriptor) -> Descriptor | None:
    """The message a field leads to: a map's value type, not its synthetic entry."""
    message = field.message_type
    if message is not None and message.GetOptions().map_entry:
        message = message.fields_by_name["value"].message_type
    if message is None or message.full_name.startswith(LEAF_PREFIXES):
        return None
    return message


def walk_roots(roots: tuple[str, ...] = ROOTS) -> Iterator[FieldRef]:
    """Each (message, field) once, at the first path that reaches it; output-only fields are
    yielded (flagged) but not descended into: nothing a request sets lies below them."""
    seen: set[str] = set()
    for root in roots:
        yield from _walk(root_descriptor(root), root, root, seen)


def _walk(message: Descriptor, path: str, root: str, seen: set[str]) -> Iterator[FieldRef]:
    if message.full_name in seen:
        return
    seen.add(message.full_name)
    for field in message.fields:
        output_only = is_output_only(message, field)
        field_path = f"{path}.{field.name}"
        yield FieldRef(
            message.full_name, field.name, field.json_name, field_path, root, output_only
        )
        child = child_message(field)
        if child is not None and not output_only:
            yield from _walk(child, field_path, root, seen)
