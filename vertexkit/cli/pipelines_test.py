"""`vertexkit run` refuses bad parameters with one line and a non-zero exit, creating nothing."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from vertexkit.cli import app
from vertexkit.local import LocalCloud


@pytest.mark.parametrize(
    ("param", "message"),
    [
        ("colour=red", "--param colour: unknown parameter"),
        ("n_estimators=many", "--param n_estimators='many': expected an integer"),
        ("machine_type=n1-giant-7", "--param machine_type: unknown machine type 'n1-giant-7'"),
        (
            "accelerator_type=NVIDIA_TESLA_A100",
            "--param accelerator_type: NVIDIA_TESLA_A100 cannot",
        ),
        ("serving_machine_type=tiny", "--param serving_machine_type: unknown machine type"),
        (
            "source_query=SELECT * FROM `local-project.nope.missing`",
            "--param source_query: Not found: Dataset local-project:nope",
        ),
    ],
)
def test_bad_parameters_end_with_one_line_before_anything_is_created(
    tmp_path: Path, param: str, message: str
) -> None:
    home = tmp_path / "home"
    result = CliRunner().invoke(app, ["run", "training", "--home", str(home), "--param", param])
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ")
    assert message in " ".join(result.output.split()), result.output
    if home.exists():  # the data check starts the local cloud: it must hold no job or model
        with LocalCloud(home=home) as cloud:
            context = cloud.context()
            assert list(context.bigquery_client().list_jobs()) == []
            assert list(context.job_client().list_custom_jobs(parent=context.parent)) == []


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ("local-project.nope.events", "source_table: Not found: Dataset local-project:nope"),
        (
            "bigquery-public-data.ml_datasets.nope",
            "--param source_table: Not found: Table bigquery-public-data:ml_datasets.nope",
        ),
        ("events", "--param source_table: 'events' is not a table: give DATASET.TABLE"),
    ],
    ids=["missing-dataset", "missing-table", "not-a-table-name"],
)
def test_a_source_table_that_does_not_exist_is_refused_before_the_run(
    tmp_path: Path, table: str, message: str
) -> None:
    home = tmp_path / "home"
    arguments = ["run", "retraining", "--home", str(home), "-p", f"source_table={table}"]
    result = CliRunner().invoke(app, [*arguments, "-p", "timestamp_column=at"])
    assert result.exit_code == 2
    assert message in " ".join(result.output.split()), result.output
    with LocalCloud(home=home) as cloud:
        context = cloud.context()
        assert list(context.pipeline_client().list_pipeline_jobs(parent=context.parent)) == []


def test_unknown_pipeline_names_the_built_ins(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["run", "no-such-pipeline", "--home", str(tmp_path)])
    assert result.exit_code == 2
    assert "use one of ['gpu_training', 'retraining', 'training', 'tuning']" in " ".join(
        result.output.split()
    )


def test_vertex_needs_project_and_pipeline_root() -> None:
    result = CliRunner().invoke(app, ["run", "training", "--vertex"])
    assert result.exit_code == 2
    assert "--vertex needs --project and --pipeline-root" in " ".join(result.output.split())


# -- compile applies run's preflight -------------------------------------------------------------
T4_ON_E2_MODULE = """
from kfp import dsl

from vertexkit.components import custom_training_job


@dsl.pipeline(name="t4-on-e2")
def t4_on_e2(project: str = "local-project", machine_type: str = "e2-standard-4"):
    custom_training_job(
        project=project,
        location="us-central1",
        display_name="train",
        base_output_directory="gs://b/out",
        container_image_uri="us-docker.pkg.dev/vertex-ai/training/sklearn-cpu.1-6:latest",
        machine_type=machine_type,
        accelerator_type="NVIDIA_TESLA_T4",
        accelerator_count=1,
    )
"""


def test_compile_refuses_what_run_refuses_with_the_same_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An e2-standard-4 takes no GPU (Vertex's machine table, `specs/data/compute.json`): run
    refuses it before anything is created, and compile now refuses it too, word for word."""
    (tmp_path / "t4_on_e2_module.py").write_text(T4_ON_E2_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "t4_on_e2_module", raising=False)
    ref = "t4_on_e2_module:t4_on_e2"
    home, out = tmp_path / "home", tmp_path / "out"
    ran = CliRunner().invoke(app, ["run", ref, "--home", str(home)])
    compiled = CliRunner().invoke(app, ["compile", ref, "--output-dir", str(out)])
    assert ran.exit_code == 2 and compiled.exit_code == 2, ran.output + compiled.output
    run_error, compile_error = (" ".join(r.output.split()) for r in (ran, compiled))
    assert "e2-standard-4" in compile_error and "NVIDIA_TESLA_T4" in compile_error, compile_error
    assert compile_error == run_error
    assert not out.exists() and not home.exists()  # nothing written, nothing started
    # the same pipeline with a machine that takes a T4 compiles, to the pipeline's own name
    ok = CliRunner().invoke(app, ["compile", ref, "--output-dir", str(out)], env={"COLUMNS": "200"})
    assert ok.exit_code == 2  # the default is still e2: a parameter default is checked too
    fixed = T4_ON_E2_MODULE.replace('"e2-standard-4"', '"n1-standard-8"')
    (tmp_path / "t4_on_n1_module.py").write_text(fixed)
    monkeypatch.delitem(sys.modules, "t4_on_n1_module", raising=False)
    ok = CliRunner().invoke(app, ["compile", "t4_on_n1_module:t4_on_e2", "--output-dir", str(out)])
    assert ok.exit_code == 0, ok.output
    assert (out / "t4-on-e2.yaml").is_file()


def test_kfp_host_refusals_name_the_option() -> None:
    both = CliRunner().invoke(app, ["run", "training", "--vertex", "--kfp-host", "http://h"])
    assert both.exit_code == 2 and "choose one target" in both.output
    root = CliRunner().invoke(
        app, ["run", "training", "--kfp-host", "http://h", "--pipeline-root", "/tmp/x"]
    )
    assert root.exit_code == 2 and "--pipeline-root: must be gs://" in " ".join(root.output.split())
    closed = CliRunner().invoke(app, ["run", "training", "--kfp-host", "http://127.0.0.1:9"])
    assert closed.exit_code == 2
    assert "--kfp-host: cannot reach the KFP API at http://127.0.0.1:9" in " ".join(
        closed.output.split()
    )
