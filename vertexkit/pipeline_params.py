"""Typed pipeline parameters from `--param key=value` strings, checked against the compiled spec.

An unknown name or a value of the wrong type ends with one clear line, before anything runs.
"""

from __future__ import annotations

import functools
import json
import math
from typing import Any

import yaml


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):  # JSON (the request body) has no NaN or infinity
        raise ValueError(text)
    return value


def _json_of(kind: type) -> Any:
    def parse(text: str) -> Any:
        value = json.loads(text)
        if not isinstance(value, kind):  # `-p tags=5` is valid JSON but not a list
            raise ValueError(text)
        return value

    return parse


_PARSERS = {
    "STRING": str,
    "NUMBER_INTEGER": int,
    "NUMBER_DOUBLE": _finite,
    "BOOLEAN": lambda text: {"true": True, "false": False}[text.strip().lower()],
    "STRUCT": _json_of(dict),
    "LIST": _json_of(list),
}
_TYPE_NAMES = {
    "STRING": "a string",
    "NUMBER_INTEGER": "an integer",
    "NUMBER_DOUBLE": "a number",
    "BOOLEAN": "true or false",
    "STRUCT": "a JSON object",
    "LIST": "a JSON list",
}


# libyaml's loader reads a compiled pipeline in about 10 ms; the pure-Python one takes 0.1-0.2 s,
# and a run reads the spec several times before its job exists.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class ParameterError(ValueError):
    pass


def pipeline_spec(pipeline_yaml: str) -> dict[str, Any]:
    """The compiled pipeline's spec (its first YAML document), read the way `yaml.safe_load`
    reads it: a fresh dict on every call (callers may change theirs)."""
    as_json = _spec_as_json(pipeline_yaml)
    return json.loads(as_json) if as_json is not None else _parse_spec(pipeline_yaml)


@functools.lru_cache(maxsize=4)
def _spec_as_json(pipeline_yaml: str) -> str | None:
    """The parsed spec as JSON text, kept: a run reads one spec about 8 times before its job
    exists, and loading JSON is 20x cheaper than constructing it from YAML again. None for a
    spec JSON cannot hold unchanged (a YAML date, say): that one is parsed every time."""
    try:
        return json.dumps(_parse_spec(pipeline_yaml), allow_nan=True)
    except (TypeError, ValueError):
        return None


def _parse_spec(pipeline_yaml: str) -> dict[str, Any]:
    return next(iter(yaml.load_all(pipeline_yaml, Loader=_LOADER)))


def input_parameters(pipeline_yaml: str) -> dict[str, dict[str, Any]]:
    """The pipeline's input parameters: name -> {parameterType, defaultValue?, isOptional?}."""
    spec = pipeline_spec(pipeline_yaml)
    return spec.get("root", {}).get("inputDefinitions", {}).get("parameters", {})


def parse_params(
    pipeline_yaml: str, assignments: list[str], filled_by_target: frozenset[str] = frozenset()
) -> dict[str, Any]:
    """Parses `key=value` strings into typed values for the pipeline in `pipeline_yaml`.

    `filled_by_target`: parameters the run fills in itself when not given (`project`,
    `location`, `gcs_root`), so they are not missing even without a default."""
    declared = input_parameters(pipeline_yaml)
    values: dict[str, Any] = {}
    for assignment in assignments:
        name, sep, text = assignment.partition("=")
        if not sep:
            raise ParameterError(f"--param {assignment!r}: expected key=value")
        if name not in declared:
            raise ParameterError(
                f"--param {name}: unknown parameter; "
                f"the pipeline takes: {', '.join(sorted(declared))}"
            )
        kind = declared[name]["parameterType"]
        try:
            values[name] = _PARSERS[kind](text)
        except (ValueError, KeyError, json.JSONDecodeError):
            raise ParameterError(
                f"--param {name}={text!r}: expected {_TYPE_NAMES.get(kind, kind)}"
            ) from None
    missing = [
        name
        for name, spec in declared.items()
        if name not in values
        and name not in filled_by_target
        and "defaultValue" not in spec
        and not spec.get("isOptional")
    ]
    if missing:
        raise ParameterError(f"missing required parameter(s): {', '.join(sorted(missing))}")
    return values
