"""The child of a model process (`model_process`): loads one prebuilt-image model and answers its
predictions, one JSON line a request on stdin, one an answer on a pipe of its own.

    python -m vertexkit.local.vertex.registry.model_child FRAMEWORK

Kept apart from `model_process` so that a child imports what a load needs and nothing of the
cloud's side: the framework's modules and `vertexkit.runtime.prebuilt`'s rules.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from pathlib import Path
from typing import IO, Any

from vertexkit.runtime.prebuilt import FRAMEWORK_MODULES, Predictor, ServingError, load_prebuilt


def main(framework: str) -> None:
    from vertexkit import gc_tuning
    from vertexkit.local.vertex.registry.warmup import import_quietly

    answers = _answer_pipe()
    gc_tuning.collect_less_often()
    import_quietly(FRAMEWORK_MODULES.get(framework, ()))  # a missing one: the load says so
    gc_tuning.imports_done()
    predictor: Predictor | None = None
    for line in sys.stdin:
        request = json.loads(line)
        try:
            if "load" in request:
                image_uri, model_dir, artifact_uri = request["load"]
                predictor = load_prebuilt(image_uri, Path(model_dir), artifact_uri)
                answer: dict[str, Any] = {"loaded": True}
            else:
                assert predictor is not None, "predict before load"
                answer = {"predictions": predictor.predict(**request)}
        except ServingError as exc:
            answer = {"error": exc.message, "status": exc.status}
        except Exception as exc:  # the model's own failure, raised again in the cloud's process
            traceback.print_exc()
            answer = {"failure": f"{type(exc).__name__}: {exc}"}
        answers.write(json.dumps(answer) + "\n")
        answers.flush()
    os._exit(0)  # the cloud closed our stdin: nothing worth an interpreter teardown


def _answer_pipe() -> IO[str]:
    """The protocol's own copy of stdout; fd 1 then goes to the log, as stderr does."""
    answers = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    return answers


if __name__ == "__main__":
    main(sys.argv[1])
