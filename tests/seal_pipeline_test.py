"""The seal from a pipeline task: the same tools as tests/seal_test.py, run by a user's
lightweight component inside a pipeline that `vertexkit run` runs (runner.run_pipeline_job: the
run's own local cloud in a process of its own, real task processes)."""

# No `from __future__ import annotations`: KFP reads the component's real type annotations.

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
from kfp import compiler, dsl

from tests.seal_test import TOOLS, expected, seed
from vertexkit import runner
from vertexkit.local import LocalCloud


@dsl.component(base_image="python:3.11")
def run_tools(tools: str) -> str:
    """Runs each command as a trainer would; its output (or its failure) by tool name."""
    import json
    import subprocess

    answers = {}
    for name, command in json.loads(tools).items():
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=60)
            answers[name] = done.stdout if done.returncode == 0 else f"FAILED {done.stderr}"
        except (OSError, subprocess.TimeoutExpired) as error:
            answers[name] = f"FAILED {error}"
    return json.dumps(answers)


@dsl.pipeline(name="sealed-tools")
def sealed_tools(tools: str) -> str:
    return run_tools(tools=tools).set_caching_options(False).output


@pytest.fixture(scope="module")
def answers(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    home = tmp_path_factory.mktemp("sealed-home")
    with LocalCloud(home=home) as cloud:
        seed(cloud.context())
        project = cloud.project
    available = {name: command for name, (command, _) in TOOLS.items()
                 if shutil.which(command[0])}  # fmt: skip  (the Cloud SDK may be missing)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "pipeline.yaml"
        compiler.Compiler().compile(pipeline_func=sealed_tools, package_path=str(path))
        run = runner.run_pipeline_job(
            "sealed-tools", {"tools": json.dumps(available)}, path.read_text(), home=home,
            emit=lambda line: None,
        )  # fmt: skip
    output = run.outputs["Output"]  # pipeline_jobs reads JSON-looking text back as JSON
    return {"project": project, **(output if isinstance(output, dict) else json.loads(output))}


@pytest.mark.parametrize("tool", TOOLS, ids=TOOLS)
def test_a_pipeline_tasks_tool_reaches_the_local_cloud(answers: dict[str, Any], tool: str) -> None:
    command, answer = TOOLS[tool]
    if tool not in answers:
        pytest.skip(f"this machine has no Cloud SDK ({command[0]} is not on PATH)")
    assert answers[tool].strip().endswith(expected(answer, answers["project"])), answers[tool]
