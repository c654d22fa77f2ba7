"""BigQuery ML models (models.list/get/patch/delete). Nothing creates a model locally (CREATE
MODEL is refused, sql.py), so every dataset has none: list answers empty, and get, patch and
delete answer BigQuery's 404 for the model named, after the dataset's own 404 where it is
missing."""

from __future__ import annotations

from typing import TYPE_CHECKING

from starlette.routing import Route

from vertexkit.local.errors import not_found

if TYPE_CHECKING:
    from vertexkit.local.bigquery.routes import BigQueryService


class Models:
    def __init__(self, service: BigQueryService) -> None:
        self.service = service

    def routes(self) -> list[Route]:
        models = "/bigquery/v2/projects/{project}/datasets/{dataset}/models"
        route = self.service._route
        return [
            route(models, self.list_models, "GET"),
            route(models + "/{model}", self.no_model, "GET", "PATCH", "DELETE"),
        ]

    def _require_dataset(self, params: dict) -> None:
        warehouse = self.service.warehouse
        warehouse.dataset_body(warehouse.cursor(), params["project"], params["dataset"])

    def list_models(self, params: dict, _: dict, __: dict) -> dict:
        """ListModelsResponse with no models: Google leaves the empty list out."""
        self._require_dataset(params)
        return {}

    def no_model(self, params: dict, _: dict, __: dict) -> dict:
        self._require_dataset(params)
        # BigQuery's wording: "Not found: Model project:dataset.model"
        project, dataset, model = params["project"], params["dataset"], params["model"]
        raise not_found(f"Not found: Model {project}:{dataset}.{model}")
