"""Executes notebooks/quickstart.ipynb top to bottom in a fresh kernel and checks what it found.

The kernel is this interpreter (the venv's), declared by a kernel spec written into a temp
folder on JUPYTER_PATH, so the test needs no kernel installed on the machine.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
QUICKSTART = NOTEBOOKS / "quickstart.ipynb"
KERNEL_NAME = "vertexkit-notebook-test"
SPECIES = {
    "Adelie Penguin (Pygoscelis adeliae)",
    "Chinstrap penguin (Pygoscelis antarctica)",
    "Gentoo penguin (Pygoscelis papua)",
}
# Appended to the in-memory copy only: reports the notebook's variables as one JSON line.
PROBE = """
import json
print("PROBE " + json.dumps({
    "prediction": prediction.predictions[0],
    "registry_metrics": {k: v for k, v in metrics.items() if isinstance(v, float)},
    "pipeline_metrics": dict(run.outputs["metrics"].metadata),
    "feature_columns": feature_columns,
    "model_version": run.outputs["model"].metadata["resourceName"],
}))
"""


@pytest.fixture
def kernel_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    spec_dir = tmp_path / "jupyter" / "kernels" / KERNEL_NAME
    spec_dir.mkdir(parents=True)
    spec = {
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "vertexkit test kernel",
        "language": "python",
    }
    (spec_dir / "kernel.json").write_text(json.dumps(spec))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    return KERNEL_NAME


def test_committed_notebook_has_no_outputs() -> None:
    notebook = nbformat.read(QUICKSTART, as_version=4)
    code_cells = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert code_cells
    assert all(not cell.outputs and cell.execution_count is None for cell in code_cells)


def test_quickstart_runs_and_predicts(kernel_name: str) -> None:
    notebook = nbformat.read(QUICKSTART, as_version=4)
    notebook.cells.append(nbformat.v4.new_code_cell(PROBE))
    client = NotebookClient(
        notebook,
        kernel_name=kernel_name,
        timeout=240,
        resources={"metadata": {"path": str(NOTEBOOKS)}},  # cwd = notebooks/, as in Jupyter
    )
    client.execute()

    found = json.loads(_stream_text(notebook.cells[-1]).split("PROBE ", 1)[1])
    assert found["prediction"] in SPECIES
    # 230 mm flippers and 5.8 kg on Biscoe: only Gentoo penguins are that large.
    assert found["prediction"] == "Gentoo penguin (Pygoscelis papua)"
    assert found["model_version"].endswith("@1")
    assert found["registry_metrics"]["accuracy"] > 0.9
    assert 0 < found["registry_metrics"]["logLoss"] < 1
    for name, value in found["registry_metrics"].items():  # registry and KFP artifact agree
        assert found["pipeline_metrics"][name] == pytest.approx(value)
    assert found["feature_columns"][0] == "island"

    report_cell = next(cell for cell in notebook.cells if "HTML(" in cell.source)
    html = "".join(
        o.data["text/html"] for o in report_cell.outputs if "text/html" in o.get("data", {})
    )
    assert "<img" in html or "<svg" in html  # the plots are embedded in the report


def _stream_text(cell: nbformat.NotebookNode) -> str:
    return "".join(o.text for o in cell.outputs if o.output_type == "stream")
