"""The README's examples stay true: its composed pipeline compiles, its commands exist."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from kfp import compiler
from typer.testing import CliRunner

from vertexkit.cli import app

README = Path(__file__).resolve().parent.parent / "README.md"


def _python_block_after(heading: str) -> str:
    text = README.read_text()
    section = text[text.index(heading) :]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_composed_pipeline_compiles(tmp_path: Path) -> None:
    namespace: dict = {}
    # dont_inherit: this module's postponed annotations must not reach KFP's type checks.
    code = compile(
        _python_block_after("## Compose your own pipeline"), "README.md", "exec", dont_inherit=True
    )
    exec(code, namespace)
    target = tmp_path / "my_pipeline.yaml"
    compiler.Compiler().compile(namespace["my_pipeline"], str(target))
    compiled = target.read_text()
    for task in ("bigquery-export-dataset", "custom-training-job", "upload-model", "deploy-model"):
        assert f"{task}:" in compiled


def test_every_cli_command_in_the_readme_exists() -> None:
    commands = set(re.findall(r"`vertexkit ([a-z]+(?: [a-z]+)?)", README.read_text()))
    assert commands, "the README names no vertexkit command"
    for command in sorted(commands):
        words = command.split()
        result = CliRunner().invoke(app, [*words, "--help"])
        if result.exit_code != 0:  # "run training" and the like: the first word is the command
            result = CliRunner().invoke(app, [words[0], "--help"])
        assert result.exit_code == 0, f"`vertexkit {command}` in the README: {result.output}"


def test_composed_pipeline_saved_at_the_root_passes_the_lint(tmp_path: Path) -> None:
    """Saved as `my_module.py` at the repository root (where `vertexkit run my_module:...`
    finds it), the example passes `make test`'s `ruff check` under this repository's rules."""
    ruff = [sys.executable, "-m", "ruff", "check", "--no-cache", "--stdin-filename",
            "my_module.py", "-"]  # fmt: skip  (checked as that file, nothing written)
    checked = subprocess.run(
        ruff,
        input=_python_block_after("## Compose your own pipeline"),
        cwd=README.parent, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert checked.returncode == 0, checked.stdout + checked.stderr
