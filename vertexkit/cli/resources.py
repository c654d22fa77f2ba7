"""`vertexkit models list`, `vertexkit endpoints list`, `vertexkit predict`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from vertexkit.cli.cloud import cloud_for_command
from vertexkit.cli.errors import UserError, client_error_message, plain_console
from vertexkit.cli.options import HomeOption, ProjectOption, RegionOption

models_app = typer.Typer(no_args_is_help=True, help="Models in the Model Registry.")
endpoints_app = typer.Typer(no_args_is_help=True, help="Endpoints and their deployed models.")


@models_app.command("list")
def list_models(
    project: ProjectOption = None, region: RegionOption = None, home: HomeOption = None
) -> None:
    """Every model version: name, version, aliases, created."""
    from google.cloud import aiplatform

    with cloud_for_command(project, region, home):
        table = _table("model", "id", "version", "aliases", "created")
        for model in aiplatform.Model.list():
            for version in model.versioning_registry.list_versions():
                table.add_row(
                    model.display_name,
                    model.name,
                    str(version.version_id),
                    ", ".join(version.version_aliases or []),
                    str(version.version_create_time)[:19],
                )
        plain_console().print(table)


@endpoints_app.command("list")
def list_endpoints(
    project: ProjectOption = None, region: RegionOption = None, home: HomeOption = None
) -> None:
    """Every endpoint with its deployed models and traffic split."""
    from google.cloud import aiplatform

    with cloud_for_command(project, region, home):
        table = _table("endpoint", "id", "deployed model", "model@version", "traffic")
        for endpoint in aiplatform.Endpoint.list():
            split = endpoint.traffic_split or {}
            deployed = endpoint.list_models() or [None]
            for model in deployed:
                table.add_row(
                    endpoint.display_name,
                    endpoint.name,
                    model.id if model else "-",
                    f"{model.model.rsplit('/', 1)[-1]}@{model.model_version_id}" if model else "-",
                    f"{split.get(model.id, 0)}%" if model else "-",
                )
        plain_console().print(table)


def _table(*columns: str) -> Table:
    """A table whose cells wrap instead of being cut: IDs must stay copyable."""
    table = Table()
    for column in columns:
        table.add_column(column, overflow="fold")
    return table


def _load_instances(instances: str) -> list[Any]:
    """Inline JSON when the text starts like JSON (`[` or `{`), else the name of a JSON file."""
    inline = instances.lstrip().startswith(("[", "{"))
    text = instances if inline else _read_instances_file(Path(instances))
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        source = "inline JSON" if inline else f"{instances} (a JSON file)"
        raise UserError("--instances", f"{source} is not valid JSON: {exc}") from None
    if isinstance(value, dict) and "instances" in value:
        value = value["instances"]
    if not isinstance(value, list) or not value:
        raise UserError("--instances", 'must be a non-empty JSON list (or {"instances": [...]})')
    return value


def _read_instances_file(path: Path) -> str:
    if not path.is_file():
        raise UserError(
            "--instances", f"{path} is neither a JSON file nor inline JSON (a `[` or `{{`)"
        )
    return path.read_text()


def _find_endpoint(endpoint: str) -> Any:
    from google.cloud import aiplatform

    matches = [
        e
        for e in aiplatform.Endpoint.list()
        if endpoint in (e.display_name, e.name, e.resource_name)
    ]
    if not matches:
        raise UserError("ENDPOINT", f"no endpoint named {endpoint!r}")
    return matches[-1]


def predict(
    endpoint: Annotated[str, typer.Argument(help="Endpoint resource name, ID or display name")],
    instances: Annotated[str, typer.Option(help="A JSON file or inline JSON list of instances")],
    project: ProjectOption = None,
    region: RegionOption = None,
    home: HomeOption = None,
) -> None:
    """Send instances to an endpoint and print the predictions."""
    from google.api_core.exceptions import ClientError

    rows = _load_instances(instances)
    with cloud_for_command(project, region, home):
        target = _find_endpoint(endpoint)
        try:
            response = target.predict(instances=rows)
        except ClientError as exc:
            raise UserError("ENDPOINT", f"{endpoint!r}: {client_error_message(exc)}") from None
        plain_console().print_json(
            json.dumps(
                {
                    "predictions": list(response.predictions),
                    "deployedModelId": response.deployed_model_id,
                    "model": response.model_resource_name,
                    "modelVersionId": response.model_version_id,
                },
                default=str,
            )
        )
