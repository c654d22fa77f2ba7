"""The metadata list filter: the forms the SDK writes, and refusals naming `filter`."""

import pytest

from vertexkit.local.errors import ApiError
from vertexkit.local.vertex.core.filters import compile_filter

RUN = {"schemaTitle": "system.ExperimentRun", "parentContexts": ["ctx/exp"], "displayName": "r1"}
EXPERIMENT = {"schemaTitle": "system.Experiment", "displayName": "exp", "isDefault": True}
EXECUTION = {"schemaTitle": "system.Run", "_contexts": ["ctx/exp"]}


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ('schema_title="system.ExperimentRun"', [RUN]),
        ('(schema_title="system.ExperimentRun" OR schema_title="system.Run")', [RUN, EXECUTION]),
        ('schema_title="system.ExperimentRun" AND parent_contexts:"ctx/exp"', [RUN]),
        ('in_context("ctx/exp")', [EXECUTION]),
        ("is_default=true", [EXPERIMENT]),
        ('display_name="exp"', [EXPERIMENT]),
        ("", [RUN, EXPERIMENT, EXECUTION]),
    ],
)
def test_filters_keep_what_they_name(text: str, kept: list[dict]) -> None:
    keep = compile_filter(text)
    assert [r for r in (RUN, EXPERIMENT, EXECUTION) if keep(r)] == kept


@pytest.mark.parametrize("text", ['bogus="x"', 'schema_title="a" AND', "(display_name=x", "a < b"])
def test_unreadable_filters_are_refused_naming_the_field(text: str) -> None:
    with pytest.raises(ApiError) as refused:
        compile_filter(text)
    assert refused.value.code == 400 and "filter" in str(refused.value)
