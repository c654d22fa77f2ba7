from __future__ import annotations

import pytest

from vertexkit.specs import (
    SpecError,
    parse_resource_name,
    validate_display_name,
    validate_endpoint_id,
    validate_labels,
    validate_model_id,
    validate_region,
)


def test_display_name() -> None:
    assert validate_display_name("é" * 128) == "é" * 128  # characters, not bytes
    for bad in ("", "   ", None, "x" * 129):
        with pytest.raises(SpecError) as caught:
            validate_display_name(bad)
        assert caught.value.field == "displayName" and "128" in str(caught.value)


def test_labels_accept_vertex_rules() -> None:
    labels = {"team": "ml-platform", "cost_center": "", "été": "données", "k9": "v_1"}
    assert validate_labels(labels) == labels
    assert validate_labels({f"k{i}": "v" for i in range(64)})


@pytest.mark.parametrize(
    ("labels", "field"),
    [
        ({"Team": "x"}, "labels.Team"),
        ({"9lives": "x"}, "labels.9lives"),
        ({"_x": "x"}, "labels._x"),
        ({"": "x"}, "labels."),
        ({"k" * 64: "x"}, "labels." + "k" * 64),
        ({"team": "ML"}, "labels.team"),
        ({"team": "a b"}, "labels.team"),
        ({"team": "v" * 64}, "labels.team"),
        ({f"k{i}": "v" for i in range(65)}, "labels"),
    ],
)
def test_labels_rejected(labels: dict[str, str], field: str) -> None:
    with pytest.raises(SpecError) as caught:
        validate_labels(labels)
    assert caught.value.field == field
    assert "63" in str(caught.value) or "64" in str(caught.value)


def test_region() -> None:
    assert validate_region("europe-west4") == "europe-west4"
    with pytest.raises(SpecError) as caught:
        validate_region("mars-north1")
    assert caught.value.field == "location" and "us-central1" in str(caught.value)


def test_model_and_endpoint_ids() -> None:
    assert validate_model_id("penguins_model-2") == "penguins_model-2"
    for bad in ("2model", "-m", "Model", "m" * 64):
        with pytest.raises(SpecError, match=r"a-z0-9_-"):
            validate_model_id(bad)
    for good in ("penguins", "p-1", "123456789"):
        assert validate_endpoint_id(good) == good
    for bad in ("p-", "1234567890", "0123", "P", "p_1"):
        with pytest.raises(SpecError, match=r"up to 9 digits"):
            validate_endpoint_id(bad)


def test_resource_names() -> None:
    parts = parse_resource_name(
        "projects/my-proj/locations/us-central1/customJobs/42", "customJobs"
    )
    assert parts == {"project": "my-proj", "location": "us-central1", "id": "42"}
    with pytest.raises(SpecError, match="projects/PROJECT/locations/REGION/customJobs/ID"):
        parse_resource_name("projects/p/customJobs/42", "customJobs")
    with pytest.raises(SpecError, match="invalid project"):
        parse_resource_name("projects/UP/locations/us-central1/customJobs/1", "customJobs")
