from __future__ import annotations

import pytest

from vertexkit.local.errors import ApiError
from vertexkit.local.vertex.registry.filters import compile_filter

MODEL = {"displayName": "penguins", "labels": {"team": "birds", "stage": "prod"}}


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("", True),
        ('display_name="penguins"', True),
        ("displayName=penguins", True),
        ('display_name="other"', False),
        ('labels.team="birds"', True),
        ('labels.team="fish"', False),
        ("labels.stage:*", True),
        ("labels:owner", False),
        ('display_name="penguins" AND labels.stage="prod"', True),
        ('display_name="penguins" AND labels.stage="dev"', False),
        ('labels.team!="fish"', True),
    ],
)
def test_filter_terms(expression: str, expected: bool) -> None:
    assert compile_filter(expression)(MODEL) is expected


def test_unsupported_filter_is_refused() -> None:
    with pytest.raises(ApiError, match="Unsupported filter term") as caught:
        compile_filter("create_time>2024")
    assert caught.value.code == 400
