"""Wire format of prediction answers; other answers are the stored Model/Endpoint JSON."""

from __future__ import annotations

from typing import Any

from starlette.responses import JSONResponse

from vertexkit.local.vertex.store import Resource


def prediction(deployed: Resource, display_name: str, predictions: list[Any]) -> Resource:
    """A PredictResponse: predictions plus which deployed model and version answered."""
    return {
        "predictions": predictions,
        "deployedModelId": deployed["id"],
        "model": deployed["model"],
        "modelVersionId": deployed["modelVersionId"],
        "modelDisplayName": display_name,
    }


def raw_prediction(endpoint_id: str, deployed: Resource, predictions: list[Any]) -> JSONResponse:
    """rawPredict: the container's JSON body; the model that answered travels in headers."""
    return JSONResponse(
        {"predictions": predictions},
        headers={
            "X-Vertex-AI-Endpoint-Id": endpoint_id,
            "X-Vertex-AI-Deployed-Model-Id": deployed["id"],
            "X-Vertex-AI-Model": deployed["model"],
            "X-Vertex-AI-Model-Version-Id": deployed["modelVersionId"],
        },
    )
