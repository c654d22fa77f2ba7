"""Google's own aiplatform system tests (python-aiplatform `tests/system/aiplatform/`, vendored
from commit 91cc8ce4f015771b5d8c43c8764ea9dc9abdb216, Apache 2.0, each file with its header),
run against a local cloud instead of a real project.

They expect a project in BUILD_SPECIFIC_GCLOUD_PROJECT, the region us-central1, and Google's
clients created with their defaults (`aiplatform.init(project=..., location=...)`,
`storage.Client(project=...)`): the local cloud's redirect (`vertexkit/local/hooks/
vertexkit_redirect.py`, what `vertexkit local exec` installs) points those at it. Tests that
need what this machine lacks are skipped with the reason; those that fail because of the local
cloud are `xfail(strict=True)` with the cause (`EXPECTED` below).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from vertexkit.local import LocalCloud
from vertexkit.local.projects import DEFAULT_PROJECT

HOOKS = Path(__file__).resolve().parents[2] / "vertexkit" / "local" / "hooks"
# Read by e2e_base at import, before any test module is collected.
os.environ["BUILD_SPECIFIC_GCLOUD_PROJECT"] = DEFAULT_PROJECT

# test id (file::class::test) -> why it is skipped here: what this machine lacks or what the
# test reaches that is a real Google resource.
SAMPLES = "reads gs://cloud-samples-data-us-central1 (Google's samples), a real Google resource"
AUTOLOG = (
    "CustomJob.from_local_script(enable_autolog=True) adds `google-cloud-aiplatform"
    "[autologging]` (mlflow>=1.27,<=2.16) to the script's package requirements; mlflow is not "
    "in this environment, so the job's pip install (venvs.pip_install) resolves it from the "
    "package index: measured 12-01, it backtracked through mlflow's versions down to 1.27.0 "
    "for 8 minutes and failed the job on an interrupted 17.9 MB download. The local cloud is not "
    "at fault: the same flow without autolog passes (test_from_local_script_prebuilt_container "
    "and _custom_container)"
)
SKIPPED: dict[str, str] = {
    "test_model_upload.py::TestModelUploadAndUpdate::test_upload_and_deploy_xgboost_model": SAMPLES,
    "test_experiments.py::TestExperiments::test_log_execution_and_artifact": SAMPLES,
    "test_custom_job.py::TestCustomJob::test_from_local_script_enable_autolog_prebuilt_container":
        AUTOLOG,
    "test_custom_job.py::TestCustomJob::test_from_local_script_enable_autolog_custom_container":
        AUTOLOG,
}  # fmt: skip
# test id -> why it fails against the local cloud (xfail strict: it must keep failing).
EXPECTED: dict[str, str] = {
}  # fmt: skip


@pytest.fixture(scope="session", autouse=True)
def google_system_cloud(local_cloud: LocalCloud) -> LocalCloud:
    """The suite's local cloud (its variables are set by `local_cloud`), with Google's clients
    created with their defaults redirected to it."""
    sys.path.insert(0, str(HOOKS))
    import vertexkit_redirect

    vertexkit_redirect.install_from_env()
    return local_cloud


@pytest.fixture(scope="session", autouse=True)
def scratch_working_directory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Google's tests compile into relative paths (`pipeline.json`, `pipeline.yaml`): they run
    in a folder of their own, so the checkout stays clean. One folder for the session, as a
    class's tests share state."""
    previous = Path.cwd()
    scratch = tmp_path_factory.mktemp("google_system_cwd")
    os.chdir(scratch)
    try:
        yield scratch
    finally:
        os.chdir(previous)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "google_system/" not in item.nodeid:
            continue
        test_id = item.nodeid.split("google_system/", 1)[-1]
        if test_id in SKIPPED:
            item.add_marker(pytest.mark.skip(reason=SKIPPED[test_id]))
        elif test_id in EXPECTED:
            item.add_marker(pytest.mark.xfail(reason=EXPECTED[test_id], strict=True))
