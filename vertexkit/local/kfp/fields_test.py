"""Every field of the KFP v2beta1 request messages has a declared local meaning, and the table
docs/kfp.md shows is the one the code enforces. The messages' fields are read from
kfp-server-api's models (generated from kubeflow/pipelines backend/api/v2beta1/swagger/*.json)."""

from pathlib import Path

import kfp_server_api
import pytest

from vertexkit.local.kfp import fields

DOC = Path(__file__).resolve().parents[3] / "docs" / "kfp.md"
MODELS = {
    "Run": kfp_server_api.V2beta1Run,
    "Experiment": kfp_server_api.V2beta1Experiment,
    "Pipeline": kfp_server_api.V2beta1Pipeline,
    "PipelineVersion": kfp_server_api.V2beta1PipelineVersion,
    "CreatePipelineAndVersionRequest": kfp_server_api.V2beta1CreatePipelineAndVersionRequest,
    "RecurringRun": kfp_server_api.V2beta1RecurringRun,
}
NESTED = {
    ("Run", "runtime_config"): kfp_server_api.V2beta1RuntimeConfig,
    ("Run", "pipeline_version_reference"): kfp_server_api.V2beta1PipelineVersionReference,
    ("RecurringRun", "trigger"): kfp_server_api.V2beta1Trigger,
}


@pytest.mark.parametrize("message", sorted(MODELS))
def test_every_field_of_the_api_has_a_local_meaning(message: str) -> None:
    assert set(fields.MESSAGES[message]) == set(MODELS[message].openapi_types)


@pytest.mark.parametrize(("message", "field"), sorted(NESTED))
def test_every_nested_field_has_a_local_meaning(message: str, field: str) -> None:
    declared = fields.MESSAGES[message][field].message
    assert declared is not None
    assert set(declared) == set(NESTED[(message, field)].openapi_types)


def test_trigger_schedules_have_every_field() -> None:
    trigger = fields.TRIGGER
    assert set(trigger["cron_schedule"].message) == set(
        kfp_server_api.V2beta1CronSchedule.openapi_types
    )
    assert set(trigger["periodic_schedule"].message) == set(
        kfp_server_api.V2beta1PeriodicSchedule.openapi_types
    )


def test_docs_show_the_table_the_code_enforces() -> None:
    assert fields.markdown() in DOC.read_text(), (
        "docs/kfp.md is stale: paste vertexkit.local.kfp.fields.markdown() into it"
    )
