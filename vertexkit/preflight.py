"""Checks a pipeline's parameters before a run creates anything.

A pipeline run fails late and costs money when a machine type is misspelt or a table is
missing: the query and export tasks would already have run. These checks look at parameters by
their conventional names (the built-in pipelines use them; a user's pipeline that uses the same
names gets the same checks) and raise `PreflightError` naming the parameter.
"""

from __future__ import annotations

from typing import Any

from vertexkit.context import CloudContext
from vertexkit.specs import SpecError
from vertexkit.specs.machines import MachineSpec, validate_dedicated_resources


class PreflightError(ValueError):
    pass


def check_parameters(values: dict[str, Any]) -> None:
    """Offline checks: machine types, accelerators and their counts."""
    if "machine_type" in values:
        accelerator = values.get("accelerator_type") or None
        spec = {
            "machineType": values["machine_type"],
            "acceleratorType": accelerator,
            "acceleratorCount": values.get("accelerator_count") or 0 if accelerator else None,
        }
        _as_preflight(
            lambda: MachineSpec.from_api({k: v for k, v in spec.items() if v is not None}).check(
                "", for_prediction=False
            ),
            {
                "machineType": "machine_type",
                "acceleratorType": "accelerator_type",
                "acceleratorCount": "accelerator_count",
            },
        )
    if values.get("serving_machine_type"):
        _as_preflight(
            lambda: validate_dedicated_resources(
                {
                    "machineSpec": {"machineType": values["serving_machine_type"]},
                    "minReplicaCount": 1,
                    "maxReplicaCount": 1,
                }
            ),
            {"": "serving_machine_type"},
        )


def check_data(context: CloudContext, values: dict[str, Any]) -> None:
    """Online checks that create nothing: the source query dry-runs, the source table exists."""
    from google.api_core import exceptions
    from google.cloud import bigquery

    client = context.bigquery_client()
    location = values.get("bq_location") or None
    try:
        if values.get("source_query"):
            config = bigquery.QueryJobConfig(dry_run=True, use_query_cache=False)
            client.query(values["source_query"], job_config=config, location=location)
        if values.get("source_table"):
            client.get_table(values["source_table"])
    except (exceptions.BadRequest, exceptions.NotFound) as exc:
        name = "source_query" if values.get("source_query") else "source_table"
        reason = exc.errors[0].get("message") if exc.errors else exc.message.splitlines()[0]
        raise PreflightError(f"--param {name}: {reason}") from None


def _as_preflight(check: Any, parameter_by_field: dict[str, str]) -> None:
    """Runs a spec check; a SpecError becomes a PreflightError naming the pipeline parameter."""
    try:
        check()
    except SpecError as exc:
        field = exc.field.rsplit(".", 1)[-1]
        parameter = parameter_by_field.get(field) or next(iter(parameter_by_field.values()))
        reason = getattr(exc, "reason", None) or str(exc)
        raise PreflightError(f"--param {parameter}: {reason}") from None
