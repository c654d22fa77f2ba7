"""`vertexkit models list`, `vertexkit endpoints list`, `vertexkit predict`.

They read through the Vertex AI REST API directly (vertexkit/vertex_rest.py), so a verb
against a running `vertexkit local up` or Vertex AI answers without importing the aiplatform
SDK; the rows are those the SDK's objects gave (same columns, values and formats).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from vertexkit.cli.cloud import rest_for_command
from vertexkit.cli.errors import UserError, client_error_message, plain_console
from vertexkit.cli.names import find_by_name
from vertexkit.cli.options import HomeOption, ProjectOption, RegionOption
from vertexkit.vertex_rest import ServiceRefused, VertexRest, as_proto_value, rfc3339_time

models_app = typer.Typer(no_args_is_help=True, help="Models in the Model Registry.")
endpoints_app = typer.Typer(no_args_is_help=True, help="Endpoints and their deployed models.")
NO_MODEL = ("-", "-", "-")  # the row of an endpoint with nothing deployed


@models_app.command("list")
def list_models(
    project: ProjectOption = None, region: RegionOption = None, home: HomeOption = None
) -> None:
    """Every model version: name, version, aliases, created."""
    with rest_for_command(project, region, home) as vertex:
        table = _table("model", "id", "version", "aliases", "created")
        for model in vertex.list(f"{vertex.parent}/models", "models"):
            for version in vertex.list(f"{model['name']}:listVersions", "models"):
                table.add_row(*_version_row(model, version))
        plain_console().print(table)


def _version_row(model: dict[str, Any], version: dict[str, Any]) -> tuple[str, ...]:
    created = rfc3339_time(version.get("versionCreateTime", ""))
    return (
        model.get("displayName", ""),
        _last_part(model["name"]),
        str(version.get("versionId", "")),
        ", ".join(version.get("versionAliases") or []),
        str(created)[:19],  # as str() of the SDK's datetime: "YYYY-MM-DD HH:MM:SS", UTC
    )


@endpoints_app.command("list")
def list_endpoints(
    project: ProjectOption = None, region: RegionOption = None, home: HomeOption = None
) -> None:
    """Every endpoint with its deployed models and traffic split."""
    with rest_for_command(project, region, home) as vertex:
        table = _table("endpoint", "id", "deployed model", "model@version", "traffic")
        for endpoint in _public_endpoints(vertex):
            split = endpoint.get("trafficSplit") or {}
            for deployed in endpoint.get("deployedModels") or [None]:
                cells = _deployed_cells(deployed, split) if deployed else NO_MODEL
                table.add_row(endpoint.get("displayName", ""), _last_part(endpoint["name"]), *cells)
        plain_console().print(table)


def _public_endpoints(vertex: VertexRest) -> list[dict[str, Any]]:
    """The endpoints `aiplatform.Endpoint.list()` gives: no VPC-peered or PSC ones (those are
    `PrivateEndpoint`s, listed and called through other routes)."""
    return [
        endpoint
        for endpoint in vertex.list(f"{vertex.parent}/endpoints", "endpoints")
        if not endpoint.get("network") and not endpoint.get("privateServiceConnectConfig")
    ]


def _deployed_cells(deployed: dict[str, Any], split: dict[str, Any]) -> tuple[str, str, str]:
    model_id = _last_part(deployed.get("model", ""))
    version = deployed.get("modelVersionId", "")
    share = int(split.get(deployed.get("id", ""), 0))
    return deployed.get("id", ""), f"{model_id}@{version}", f"{share}%"


def _last_part(resource_name: str) -> str:
    return resource_name.rsplit("/", 1)[-1]


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


def _find_endpoint(vertex: VertexRest, endpoint: str) -> dict[str, Any]:
    """The endpoint whose resource name, ID or display name (where unique) is `endpoint`."""
    found = find_by_name(endpoint, _public_endpoints(vertex), "endpoint", "ENDPOINT")
    if found is None:
        raise UserError("ENDPOINT", f"no endpoint named {endpoint!r}")
    return found


# `predict --help`: the instance format, with an instance of the repo's tabular trainer in its
# model's feature order (`feature_columns.json`); one paragraph a line, as typer's help wraps them.
SAMPLE_INSTANCE = '[["Biscoe", 45.1, 14.5, 215, 5000, "FEMALE"]]'
PREDICT_HELP = "\n\n".join(
    [
        "Send instances to an endpoint and print the predictions.",
        "--instances is a JSON list (inline, or a file), one instance per row, each a list of "
        "values in the deployed model's feature order: the `feature_columns.json` beside the "
        "model in its version's artifact folder. For the repo's tabular trainer on penguins "
        "(`vertexkit run training`, endpoint penguins-endpoint) that order is island, "
        "culmen_length_mm, culmen_depth_mm, flipper_length_mm, body_mass_g, sex:",
        f"vertexkit predict penguins-endpoint --instances '{SAMPLE_INSTANCE}'",
        "`vertexkit run` ends with a sample instance of its own model. A request body as Vertex "
        'AI takes it, {"instances": [...]}, is read too.',
    ]
)


def predict(
    endpoint: Annotated[str, typer.Argument(help="Endpoint resource name, ID or display name")],
    instances: Annotated[str, typer.Option(help="A JSON file or inline JSON list of instances")],
    project: ProjectOption = None,
    region: RegionOption = None,
    home: HomeOption = None,
) -> None:
    """Send instances to an endpoint and print the predictions (help: PREDICT_HELP)."""
    rows = _load_instances(instances)
    with rest_for_command(project, region, home) as vertex:
        target = _find_endpoint(vertex, endpoint)
        try:
            # as the SDK sends them: through protobuf Values, whose numbers are all doubles
            answer = vertex.post(f"{target['name']}:predict", {"instances": as_proto_value(rows)})
        except ServiceRefused as exc:
            raise UserError("ENDPOINT", f"{endpoint!r}: {client_error_message(exc)}") from None
        plain_console().print_json(json.dumps(_prediction(answer)))


def _prediction(answer: dict[str, Any]) -> dict[str, Any]:
    """The fields of the SDK's `Prediction`, under the names the REST answer gives them."""
    return {
        "predictions": as_proto_value(answer.get("predictions", [])),
        "deployedModelId": answer.get("deployedModelId", ""),
        "model": answer.get("model", ""),
        "modelVersionId": answer.get("modelVersionId", ""),
    }
