"""Typed `--param key=value` parsing against a compiled pipeline's inputs."""

# No `from __future__ import annotations`: KFP reads the annotations as real types.

import pytest
from kfp import dsl

from vertexkit.compiler import set_image
from vertexkit.pipeline_params import ParameterError, input_parameters, parse_params


@dsl.component(base_image="vertexkit/runtime:0.1.0", install_kfp_package=False)
def _echo(text: str, count: int, ratio: float, flag: bool) -> str:
    return f"{text}{count}{ratio}{flag}"


@dsl.pipeline(name="params-probe")
def _probe(text: str, count: int = 3, ratio: float = 0.5, flag: bool = False, tags: list = []):  # noqa: B006
    _echo(text=text, count=count, ratio=ratio, flag=flag)


@pytest.fixture(scope="module")
def probe_yaml(tmp_path_factory: pytest.TempPathFactory) -> str:
    from kfp import compiler

    path = tmp_path_factory.mktemp("probe") / "probe.yaml"
    compiler.Compiler().compile(_probe, str(path))
    return path.read_text()


def test_values_are_typed_by_the_pipeline_spec(probe_yaml: str) -> None:
    values = parse_params(
        probe_yaml, ["text=hi", "count=7", "ratio=0.25", "flag=TRUE", 'tags=["a","b"]']
    )
    assert values == {"text": "hi", "count": 7, "ratio": 0.25, "flag": True, "tags": ["a", "b"]}


def test_unknown_name_lists_the_declared_parameters(probe_yaml: str) -> None:
    with pytest.raises(ParameterError, match=r"--param colour: unknown parameter.*count, flag"):
        parse_params(probe_yaml, ["text=hi", "colour=red"])


@pytest.mark.parametrize(
    ("assignment", "expected"),
    [
        ("count=seven", "an integer"),
        ("ratio=high", "a number"),
        ("ratio=nan", "a number"),  # JSON request bodies have no NaN
        ("ratio=inf", "a number"),
        ("flag=maybe", "true or false"),
        ("tags=5", "a JSON list"),  # valid JSON, but not a list
        ('tags={"a": 1}', "a JSON list"),
        ("tags=[1,", "a JSON list"),
    ],
)
def test_wrong_type_names_the_expected_type(
    probe_yaml: str, assignment: str, expected: str
) -> None:
    with pytest.raises(ParameterError, match=expected):
        parse_params(probe_yaml, ["text=hi", assignment])


def test_missing_required_and_malformed(probe_yaml: str) -> None:
    with pytest.raises(ParameterError, match=r"missing required parameter.*text"):
        parse_params(probe_yaml, [])
    with pytest.raises(ParameterError, match="expected key=value"):
        parse_params(probe_yaml, ["text"])


def test_a_parameter_the_target_fills_is_not_missing(probe_yaml: str) -> None:
    """`vertexkit run` fills `project`, `location`, `gcs_root` itself when they are declared."""
    assert parse_params(probe_yaml, [], filled_by_target=frozenset({"text"})) == {}
    with pytest.raises(ParameterError, match=r"missing required parameter.*text"):
        parse_params(probe_yaml, [], filled_by_target=frozenset({"project"}))


def test_set_image_rewrites_every_executor(probe_yaml: str) -> None:
    rewritten = set_image(probe_yaml, "europe-docker.pkg.dev/p/r/vertexkit:1")
    assert "vertexkit/runtime:0.1.0" not in rewritten
    assert "europe-docker.pkg.dev/p/r/vertexkit:1" in rewritten
    assert set(input_parameters(rewritten)) == {"text", "count", "ratio", "flag", "tags"}


def test_pipeline_spec_is_a_fresh_dict_each_time_and_reads_yaml_dates() -> None:
    import datetime

    from vertexkit.pipeline_params import pipeline_spec

    text = "root:\n  inputDefinitions:\n    parameters:\n      day: {defaultValue: 2024-01-02}\n"
    first = pipeline_spec(text)
    assert first["root"]["inputDefinitions"]["parameters"]["day"]["defaultValue"] == (
        datetime.date(2024, 1, 2)  # what yaml.safe_load reads: JSON could not hold it
    )
    plain = "root: {dag: {tasks: {a: {}}}}\n"
    changed = pipeline_spec(plain)
    changed["root"]["dag"]["tasks"].clear()
    assert pipeline_spec(plain) == {"root": {"dag": {"tasks": {"a": {}}}}}
