"""The console in a real headless Chromium (Debian's `chromium` + `chromedriver`, via selenium).

One training pipeline run (module scope) feeds the run, model and endpoint pages; a small
pipeline started while its page is open shows the live view. Screenshots go to the test's temp
folder (the README's pictures were taken from them).
"""

# No `from __future__ import annotations`: KFP reads the components' real type annotations.

import json
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from google.auth.credentials import AnonymousCredentials
from kfp import compiler, dsl
from kfp.dsl import HTML, Metrics, Output

from vertexkit import pipeline_jobs, runner
from vertexkit.local import LocalCloud

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
SEVEN_TASKS = {
    "bigquery-query-job",
    "bigquery-export-dataset",
    "custom-training-job",
    "upload-model",
    "evaluate-model",
    "compare-models",
    "deploy-model",
}
INSTANCE = ["Biscoe", 45.1, 14.5, 215, 5000, "FEMALE"]
WAIT_SECONDS = 180

# Only the machine may lack something: selenium is a dev dependency (its absence is a broken
# install and fails here), the browser is a Debian package that .ci/run installs.
if not (CHROMIUM.exists() and CHROMEDRIVER.exists()):
    pytest.skip(
        "this machine lacks Debian's chromium and chromium-driver (/usr/bin/chromium, "
        "/usr/bin/chromedriver); .ci/run installs them",
        allow_module_level=True,
    )

from selenium import webdriver  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

pytestmark = pytest.mark.slow  # runs whole pipelines, as the other end-to-end tests do


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    profile = tempfile.mkdtemp(prefix="vertexkit-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--window-size=1500,1100",
        f"--user-data-dir={profile}",
    ):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def create_job(cloud: LocalCloud, name: str, pipeline_yaml: str, params: dict) -> str:
    """The PipelineJob `vertexkit run` creates (same request, same GAPIC call); returns its name."""
    context = cloud.context()
    root = f"gs://{context.project}{runner.PIPELINE_BUCKET_SUFFIX}"
    cloud.storage.ensure_bucket(root.removeprefix("gs://"))
    sdk_job = runner.build_vertex_job(
        name,
        params,
        pipeline_yaml,
        context.project,
        context.region,
        root,
        work_dir=Path(tempfile.mkdtemp(prefix="vertexkit-submitted-")),
        credentials=AnonymousCredentials(),
    )
    request = pipeline_jobs.request_from_sdk_job(sdk_job)
    return pipeline_jobs.create_job(context, request, f"{sdk_job.job_id}-{time.time_ns() % 10**6}")


@pytest.fixture(scope="module")
def training_run(local_cloud: LocalCloud) -> dict[str, Any]:
    pipeline_yaml, params = runner.prepare("training", [])
    name = create_job(local_cloud, "training", pipeline_yaml, params)
    job = pipeline_jobs.follow(local_cloud.context(), name, lambda _: None)
    assert job["state"] == "PIPELINE_STATE_SUCCEEDED", job.get("error")
    return job


def task_detail(job: dict[str, Any], task: str) -> dict[str, Any]:
    return next(t for t in job["jobDetail"]["taskDetails"] if t["taskName"] == task)


def model_name(job: dict[str, Any]) -> str:
    """`projects/.../models/ID` of the version the run uploaded."""
    artifact = task_detail(job, "upload-model")["outputs"]["model"]["artifacts"][0]
    return artifact["metadata"]["resourceName"].split("@")[0]


def endpoint_name(job: dict[str, Any]) -> str:
    artifact = task_detail(job, "deploy-model")["outputs"]["endpoint"]["artifacts"][0]
    return artifact["metadata"]["resourceName"]


def open_page(driver: Any, cloud: LocalCloud, path: str) -> None:
    driver.get(f"{cloud.url}/console/{path}")
    WebDriverWait(driver, 30).until(lambda d: d.find_element(By.TAG_NAME, "h1"))


def node_states(driver: Any) -> dict[str, str]:
    nodes = driver.find_elements(By.CSS_SELECTOR, "svg.dag g.task")
    return {
        n.get_attribute("data-task"): n.find_element(By.CSS_SELECTOR, "text.state").text
        for n in nodes
    }


def test_run_page_draws_all_seven_tasks_in_their_final_states(
    browser: Any, local_cloud: LocalCloud, training_run: dict[str, Any], tmp_path: Path
) -> None:
    open_page(browser, local_cloud, training_run["name"])
    states = node_states(browser)
    # The optional batch-predict step is drawn inside its condition; it is off by default.
    assert set(states) == SEVEN_TASKS | {"batch-predict"}
    ran = {task: state for task, state in states.items() if task in SEVEN_TASKS}
    assert ran == {task: task_detail(training_run, task)["state"] for task in SEVEN_TASKS}
    assert set(ran.values()) == {"SUCCEEDED"}
    assert states["batch-predict"] != "SUCCEEDED"  # its condition was false: it never ran
    browser.save_screenshot(str(tmp_path / "run-page.png"))


def test_evaluation_task_shows_its_confusion_matrix(
    browser: Any, local_cloud: LocalCloud, training_run: dict[str, Any], tmp_path: Path
) -> None:
    open_page(browser, local_cloud, training_run["name"] + "?task=evaluate-model")
    matrix = browser.find_element(By.CSS_SELECTOR, "svg.confusion-matrix")
    assert matrix.is_displayed() and matrix.size["width"] > 100
    classes = {
        c.get_attribute("data-true") for c in matrix.find_elements(By.CSS_SELECTOR, "g.cell")
    }
    assert len(classes) == 3  # the three penguin species
    assert len(matrix.find_elements(By.CSS_SELECTOR, "g.cell")) == 9
    frame = browser.find_element(By.CSS_SELECTOR, "iframe.artifact-frame")
    assert frame.get_attribute("sandbox") == ""
    browser.set_window_size(1500, 2300)  # the whole task panel, for the README's picture
    try:
        browser.save_screenshot(str(tmp_path / "run-page-evaluation.png"))
    finally:
        browser.set_window_size(1500, 1100)


def test_model_page_shows_the_version_with_its_default_alias(
    browser: Any, local_cloud: LocalCloud, training_run: dict[str, Any], tmp_path: Path
) -> None:
    model = model_name(training_run)
    open_page(browser, local_cloud, "models")
    browser.find_element(By.CSS_SELECTOR, f'a[href="/console/{model}"]').click()
    WebDriverWait(browser, 30).until(lambda d: d.find_elements(By.CSS_SELECTOR, "table.versions"))
    rows = browser.find_elements(By.CSS_SELECTOR, "table.versions tbody tr")
    aliases = {
        row.find_element(By.TAG_NAME, "strong").text: [
            a.text for a in row.find_elements(By.CSS_SELECTOR, ".alias")
        ]
        for row in rows
    }
    assert aliases["1"] == ["default"]
    assert endpoint_name(training_run).rsplit("/", 1)[-1] in rows[0].text
    roc = browser.find_element(By.CSS_SELECTOR, "svg.roc")  # the evaluation's ROC curve
    assert roc.is_displayed() and roc.find_element(By.TAG_NAME, "polyline").get_attribute("points")
    browser.save_screenshot(str(tmp_path / "model-page.png"))


def test_endpoint_form_predicts_as_endpoint_predict(
    browser: Any, local_cloud: LocalCloud, training_run: dict[str, Any]
) -> None:
    from google.cloud import aiplatform

    endpoint = endpoint_name(training_run)
    local_cloud.context().init_aiplatform()
    expected = aiplatform.Endpoint(endpoint).predict(instances=[INSTANCE]).predictions
    open_page(browser, local_cloud, endpoint)
    box = browser.find_element(By.ID, "instances")
    box.clear()
    box.send_keys(json.dumps([INSTANCE]))
    browser.find_element(By.CSS_SELECTOR, "form.predict button").click()
    shown = WebDriverWait(browser, 60).until(lambda d: d.find_element(By.ID, "prediction"))
    assert json.loads(shown.text)["predictions"] == list(expected)


@dsl.component(install_kfp_package=False)
def pause_then_add(a: int, seconds: float) -> int:
    import time

    time.sleep(seconds)
    return a + 1


@dsl.pipeline(name="console-live")
def live_pipeline(seconds: float = 2.0) -> int:
    first = pause_then_add(a=1, seconds=seconds)
    return pause_then_add(a=first.output, seconds=seconds).output


def test_a_run_started_with_its_page_open_turns_green_without_reload(
    browser: Any, local_cloud: LocalCloud, tmp_path: Path
) -> None:
    template = tmp_path / "live.yaml"
    compiler.Compiler().compile(live_pipeline, str(template))
    name = create_job(local_cloud, "console-live", template.read_text(), {"seconds": 3.0})
    open_page(browser, local_cloud, name)
    browser.execute_script("window.consoleMarker = 'same page';")
    assert set(node_states(browser)) == {"pause-then-add", "pause-then-add-2"}
    assert set(node_states(browser).values()) != {"SUCCEEDED"}, "the run had not ended yet"
    WebDriverWait(browser, WAIT_SECONDS).until(
        lambda d: set(node_states(d).values()) == {"SUCCEEDED"}
    )
    classes = [
        n.get_attribute("class") for n in browser.find_elements(By.CSS_SELECTOR, "svg.dag g.task")
    ]
    assert all("state-SUCCEEDED" in c for c in classes)
    assert browser.execute_script("return window.consoleMarker;") == "same page"
    WebDriverWait(browser, 10).until(
        lambda d: d.find_element(By.CSS_SELECTOR, "#run-state .badge").text == "SUCCEEDED"
    )
    browser.save_screenshot(str(tmp_path / "live-run.png"))


def test_training_task_links_its_custom_job_page(
    browser: Any, local_cloud: LocalCloud, training_run: dict[str, Any]
) -> None:
    open_page(browser, local_cloud, training_run["name"] + "?task=custom-training-job")
    link = browser.find_element(By.CSS_SELECTOR, "table.gcp-resources a")
    assert "/customJobs/" in link.get_attribute("href")
    link.click()
    WebDriverWait(browser, 30).until(lambda d: "/customJobs/" in d.current_url)
    headings = [h.get_attribute("textContent") for h in browser.find_elements(By.TAG_NAME, "h3")]
    assert "workerpool0-0.log" in headings  # the replica's log
    assert "SUCCEEDED" in browser.find_element(By.CSS_SELECTOR, "table.kv").text


ATTACK = (
    "<!doctype html><p id='static'>static report</p><script>"
    "document.body.textContent = 'script ran';"
    "try { parent.document.title = 'owned'; } catch (e) {}</script>"
)


@dsl.component(install_kfp_package=False)
def hostile_report(page: Output[HTML], text: str):
    with open(page.path, "w") as file:
        file.write(text)


@dsl.pipeline(name="console-hostile-report")
def hostile_pipeline(text: str = ""):
    hostile_report(text=text)


def test_an_html_artifact_with_a_script_renders_without_running_it(
    browser: Any, local_cloud: LocalCloud, tmp_path: Path
) -> None:
    template = tmp_path / "hostile.yaml"
    compiler.Compiler().compile(hostile_pipeline, str(template))
    name = create_job(local_cloud, "console-hostile", template.read_text(), {"text": ATTACK})
    job = pipeline_jobs.follow(local_cloud.context(), name, lambda _: None)
    assert job["state"] == "PIPELINE_STATE_SUCCEEDED", job.get("error")
    open_page(browser, local_cloud, name + "?task=hostile-report")
    title = browser.title
    frame = browser.find_element(By.CSS_SELECTOR, "iframe.artifact-frame")
    assert frame.get_attribute("sandbox") == ""
    browser.switch_to.frame(frame)
    try:
        body = WebDriverWait(browser, 30).until(lambda d: d.find_element(By.TAG_NAME, "body"))
        assert body.text == "static report"  # rendered as HTML, and its script never ran
    finally:
        browser.switch_to.default_content()
    assert browser.title == title != "owned"


@dsl.component(install_kfp_package=False)
def log_accuracy(accuracy: float, metrics: Output[Metrics]):
    metrics.log_metric("accuracy", accuracy)


@dsl.pipeline(name="console-compare")
def metrics_pipeline(accuracy: float = 0.5):
    log_accuracy(accuracy=accuracy)


def test_two_runs_checked_in_the_list_compare_side_by_side(
    browser: Any, local_cloud: LocalCloud, tmp_path: Path
) -> None:
    template = tmp_path / "compare.yaml"
    compiler.Compiler().compile(metrics_pipeline, str(template))
    names = [
        create_job(local_cloud, "console-compare", template.read_text(), {"accuracy": value})
        for value in (0.5, 0.75)
    ]
    for name in names:
        job = pipeline_jobs.follow(local_cloud.context(), name, lambda _: None)
        assert job["state"] == "PIPELINE_STATE_SUCCEEDED", job.get("error")
    open_page(browser, local_cloud, "pipelines")
    for name in names:
        browser.find_element(By.CSS_SELECTOR, f'input[name="run"][value="{name}"]').click()
    browser.find_element(By.CSS_SELECTOR, "form.compare-runs button").click()
    WebDriverWait(browser, 30).until(lambda d: "/console/compare" in d.current_url)
    rows = {
        row.find_element(By.TAG_NAME, "th").text: row
        for row in browser.find_elements(By.CSS_SELECTOR, "table.compare tbody tr")
    }
    accuracy = rows["log-accuracy.metrics.accuracy"]
    # the runs in the list's order, newest first
    assert [cell.text for cell in accuracy.find_elements(By.TAG_NAME, "td")] == ["0.75", "0.5"]
    assert accuracy.get_attribute("class") == "differs"
    assert rows["pipeline"].get_attribute("class") in ("", None)
    browser.save_screenshot(str(tmp_path / "compare-runs.png"))
