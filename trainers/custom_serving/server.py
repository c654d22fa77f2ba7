"""A scikit-learn model behind Vertex AI's custom serving container contract.

Request:  {"instances": [[...], ...], "parameters": {...}}
Response: {"predictions": [...]}; with parameters {"probabilities": true}, each prediction is
{"label": ..., "probabilities": {class: p, ...}} (something the prebuilt container cannot do,
which is why one writes a custom container).
"""

from __future__ import annotations

import json
import os
import tempfile
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

MODEL_FILE = "model.joblib"


def fetch_model_file(storage_uri: str) -> Path:
    """model.joblib from a gs:// directory (through Cloud Storage) or a local directory."""
    if not storage_uri.startswith("gs://"):
        return Path(storage_uri) / MODEL_FILE
    from google.cloud import storage

    bucket_name, _, prefix = storage_uri.removeprefix("gs://").partition("/")
    blob_name = f"{prefix.rstrip('/')}/{MODEL_FILE}" if prefix else MODEL_FILE
    emulator = os.environ.get("STORAGE_EMULATOR_HOST")
    if emulator:  # the local cloud: no credentials needed
        from google.auth.credentials import AnonymousCredentials

        client = storage.Client(
            project=os.environ.get("GOOGLE_CLOUD_PROJECT", "local-project"),
            credentials=AnonymousCredentials(),
            client_options={"api_endpoint": emulator},
        )
    else:
        client = storage.Client()
    target = Path(tempfile.mkdtemp()) / MODEL_FILE
    client.bucket(bucket_name).blob(blob_name).download_to_filename(str(target))
    return target


class Model:
    def __init__(self, path: Path) -> None:
        import joblib

        self.estimator = joblib.load(path)

    def predict(self, instances: list[Any], parameters: dict[str, Any]) -> list[Any]:
        labels = self.estimator.predict(instances).tolist()
        if not parameters.get("probabilities"):
            return labels
        probabilities = self.estimator.predict_proba(instances).tolist()
        classes = [str(c) for c in self.estimator.classes_]
        return [
            {"label": label, "probabilities": dict(zip(classes, row, strict=True))}
            for label, row in zip(labels, probabilities, strict=True)
        ]


def make_handler(model: Model, predict_route: str, health_route: str) -> type:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # headers and body are two writes: no 40 ms stall

        def log_message(self, format: str, *args: Any) -> None:  # quiet access log
            return

        def _answer(self, status: int, body: dict[str, Any]) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            if self.path == health_route:
                self._answer(HTTPStatus.OK, {"status": "healthy"})
            else:
                self._answer(HTTPStatus.NOT_FOUND, {"error": f"no route {self.path}"})

        def do_POST(self) -> None:
            if self.path != predict_route:
                self._answer(HTTPStatus.NOT_FOUND, {"error": f"no route {self.path}"})
                return
            length = int(self.headers.get("Content-Length") or 0)
            try:
                request = json.loads(self.rfile.read(length) or b"{}")
                predictions = model.predict(request["instances"], request.get("parameters") or {})
            except (ValueError, KeyError, TypeError) as exc:
                self._answer(HTTPStatus.BAD_REQUEST, {"error": str(exc)})
                return
            self._answer(HTTPStatus.OK, {"predictions": predictions})

    return Handler


def main() -> None:
    port = int(os.environ.get("AIP_HTTP_PORT", "8080"))
    predict_route = os.environ.get("AIP_PREDICT_ROUTE", "/predict")
    health_route = os.environ.get("AIP_HEALTH_ROUTE", "/health")
    model = Model(fetch_model_file(os.environ["AIP_STORAGE_URI"]))
    # A container must listen on all interfaces; the local cloud asks for loopback only.
    host = os.environ.get("SERVING_BIND_HOST", "0.0.0.0")
    handler = make_handler(model, predict_route, health_route)
    server = ThreadingHTTPServer((host, port), handler)
    server.serve_forever()


if __name__ == "__main__":
    main()
