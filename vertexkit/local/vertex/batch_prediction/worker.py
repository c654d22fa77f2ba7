"""One batch prediction replica: a process that predicts its share of the instances.

`python -m vertexkit.local.vertex.batch_prediction.worker TASK.json`. The task names the shard
(JSONL lines `{"i": index, "instance": ...}`), the output file and the model server: a Vertex
prebuilt image's model loaded here exactly as the endpoints load it (`load_prebuilt`), or the
URL of a custom serving container the job started. Instances go in batches of `batchSize`; a
batch the model refuses is split in halves until the bad instance is alone, so every good row
still gets its prediction and each bad one its own error line.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, TextIO

import urllib3

from vertexkit.runtime.prebuilt import Predictor, ServingError, load_prebuilt


class ContainerClient:
    """A custom serving container, reached as the endpoints reach it (POST `instances`)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.http = urllib3.PoolManager()

    def predict(self, instances: list[Any], parameters: Any = None) -> list[Any]:
        body: dict[str, Any] = {"instances": instances}
        if parameters is not None:
            body["parameters"] = parameters
        response = self.http.request(
            "POST", self.url, body=json.dumps(body).encode(),
            headers={"Content-Type": "application/json"}, timeout=600.0, retries=False,
        )  # fmt: skip
        if response.status != 200:
            text = response.data.decode(errors="replace")
            raise ServingError(f"The serving container answered {response.status}: {text}")
        try:
            return json.loads(response.data)["predictions"]
        except (ValueError, KeyError, TypeError) as exc:
            raise ServingError(
                f"The serving container's answer has no `predictions`: {exc}"
            ) from exc


def predictor_for(spec: dict[str, Any]) -> Predictor:
    if spec["kind"] == "container":
        return ContainerClient(spec["url"])
    return load_prebuilt(spec["image"], Path(spec["modelDir"]), spec["artifactUri"])


def explained(
    predictor: Predictor, spec: dict[str, Any] | None, parameters: Any, row: dict[str, Any]
) -> dict[str, Any]:
    """A result line's `explanation`: the online `:explain`'s sampled Shapley over the same
    predictor (`registry.explain.attributions`); none without generateExplanation."""
    if spec is None:
        return {}
    from vertexkit.local.errors import ApiError
    from vertexkit.local.vertex.registry.explain import attributions

    def predict(rows: list[Any]) -> list[Any]:
        return predictor.predict(rows, parameters)

    try:
        found = attributions(spec, row["instance"], row["prediction"], predict)
    except ApiError as exc:  # a label the model predicts, a baseline of the wrong length
        raise ServingError(f"explanation: {exc.message}") from exc
    return {"explanation": {"attributions": found}}


def predict_rows(
    predictor: Predictor,
    rows: list[dict[str, Any]],
    parameters: Any,
    out: TextIO,
    explanation_spec: dict[str, Any] | None = None,
) -> None:
    """Writes one line per row; a refused batch is split until each bad row stands alone."""
    instances = [row["instance"] for row in rows]
    try:
        predictions = predictor.predict(instances, parameters)
        if len(predictions) != len(rows):
            raise ServingError(
                f"the model answered {len(predictions)} predictions for {len(rows)} instances"
            )
        results = [
            {"i": row["i"], "prediction": prediction}
            for row, prediction in zip(rows, predictions, strict=True)
        ]
        for row, result in zip(rows, results, strict=True):
            given = {"instance": row["instance"], "prediction": result["prediction"]}
            result.update(explained(predictor, explanation_spec, parameters, given))
    except Exception as exc:  # the model's own refusal, whatever its type
        if len(rows) == 1:
            message = exc.message if isinstance(exc, ServingError) else f"{exc!r}"
            error = {"status": "INVALID_ARGUMENT", "message": message}
            out.write(json.dumps({"i": rows[0]["i"], "error": error}) + "\n")
            return
        middle = len(rows) // 2
        predict_rows(predictor, rows[:middle], parameters, out, explanation_spec)
        predict_rows(predictor, rows[middle:], parameters, out, explanation_spec)
        return
    for result in results:
        out.write(json.dumps(result) + "\n")


def batches(path: Path, size: int) -> Any:
    batch: list[dict[str, Any]] = []
    with path.open() as lines:
        for line in lines:
            batch.append(json.loads(line))
            if len(batch) == size:
                yield batch
                batch = []
    if batch:
        yield batch


def main(task_path: str) -> int:
    task = json.loads(Path(task_path).read_text())
    try:
        predictor = predictor_for(task["predictor"])
    except ServingError as exc:
        print(exc.message, file=sys.stderr)
        return 2
    with Path(task["output"]).open("w") as out:
        for batch in batches(Path(task["shard"]), int(task["batchSize"])):
            predict_rows(predictor, batch, task.get("parameters"), out, task.get("explanationSpec"))
            out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
