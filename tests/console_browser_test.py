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
from kfp.dsl import HTML, ClassificationMetrics, Metrics, Output

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
    body = pipeline_jobs.as_dict(request)
    return pipeline_jobs.create_job(context, body, f"{sdk_job.job_id}-{time.time_ns() % 10**6}")


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
    """Task -> its state as the node's class carries it (Vertex's PipelineTaskDetail.State)."""
    nodes = driver.find_elements(By.CSS_SELECTOR, "svg.dag g.task")
    return {n.get_attribute("data-task"): n.get_attribute("data-state") for n in nodes}


def node_labels(driver: Any) -> dict[str, str]:
    """Task -> the state as the node says it (Succeeded, Cached, Not triggered, ...)."""
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
    assert set(node_labels(browser)[task] for task in SEVEN_TASKS) == {"Succeeded"}
    browser.save_screenshot(str(tmp_path / "run-page.png"))


def test_a_task_whose_condition_was_false_is_not_triggered_in_the_finished_run(
    browser: Any, local_cloud: LocalCloud, training_run: dict[str, Any]
) -> None:
    # batch-predict sits in `if batch_predict_source != ''`, false by default: it never ran
    detail = next(
        (t for t in training_run["jobDetail"]["taskDetails"] if t["taskName"] == "batch-predict"),
        {},
    )
    assert detail.get("state", "PENDING") in ("PENDING", "NOT_TRIGGERED")
    open_page(browser, local_cloud, training_run["name"])
    assert node_states(browser)["batch-predict"] == "NOT_TRIGGERED"
    assert node_labels(browser)["batch-predict"] == "Not triggered"
    label = browser.find_element(By.CSS_SELECTOR, 'svg.dag g.group[data-group="condition-2"]')
    assert "batch_predict_source != ''" in " ".join(label.text.split())  # wrapped, not cut
    assert "…" not in label.text


def test_a_cached_rerun_shows_its_tasks_as_cached(
    browser: Any, local_cloud: LocalCloud, training_run: dict[str, Any], tmp_path: Path
) -> None:
    pipeline_yaml, params = runner.prepare("training", [])
    name = create_job(local_cloud, "training", pipeline_yaml, params)
    rerun = pipeline_jobs.follow(local_cloud.context(), name, lambda _: None)
    assert rerun["state"] == "PIPELINE_STATE_SUCCEEDED", rerun.get("error")
    assert {task_detail(rerun, t)["state"] for t in SEVEN_TASKS} == {"SKIPPED"}
    open_page(browser, local_cloud, name)
    labels = node_labels(browser)
    assert {labels[t] for t in SEVEN_TASKS} == {"Cached"}
    assert {node_states(browser)[t] for t in SEVEN_TASKS} == {"SKIPPED"}
    assert labels["batch-predict"] == "Not triggered"
    browser.save_screenshot(str(tmp_path / "cached-run.png"))


def cell_values(driver: Any, table_id: str) -> dict[str, tuple[str, str]]:
    """A parameters table: name -> (type, value) as shown."""
    rows = driver.find_elements(By.CSS_SELECTOR, f"table#{table_id} tbody tr")
    cells = [[c.text for c in row.find_elements(By.TAG_NAME, "td")] for row in rows]
    return {name: (kind, value) for name, kind, value in cells}


def test_task_panel_shows_the_parameters_the_task_received_integers_as_integers(
    browser: Any, local_cloud: LocalCloud, training_run: dict[str, Any]
) -> None:
    open_page(browser, local_cloud, training_run["name"] + "?task=custom-training-job")
    shown = cell_values(browser, "task-parameters")
    assert shown["boot_disk_size_gb"] == ("int", "100")  # the component's default, not 100.0
    assert shown["replica_count"] == ("int", "1")
    assert shown["accelerator_count"] == ("int", "0")
    assert shown["machine_type"] == ("str", "n1-standard-4")
    gcs_root = training_run["runtimeConfig"]["parameterValues"]["gcs_root"]
    assert shown["base_output_directory"] == ("str", f"{gcs_root}/training")
    args = json.loads(shown["args"][1])
    assert "--n-estimators=100" in args and "--max-depth=8" in args
    # everything the page shows but the task's raw log (kfp's executor prints its input there)
    shown_text = browser.execute_script(
        "const main = document.querySelector('main').cloneNode(true);"
        "main.querySelectorAll('pre.log').forEach(function (p) { p.remove(); });"
        "return main.textContent;"
    )
    assert "boot_disk_size_gb" in shown_text
    assert "pipelinechannel--" not in shown_text and "{{$" not in shown_text
    pipeline = cell_values(browser, "pipeline-parameters")
    assert pipeline["n_estimators"] == ("int", "100") and pipeline["max_depth"] == ("int", "8")


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


def test_a_model_version_links_to_the_run_and_task_that_made_it(
    browser: Any, local_cloud: LocalCloud, training_run: dict[str, Any]
) -> None:
    open_page(browser, local_cloud, model_name(training_run))
    row = browser.find_elements(By.CSS_SELECTOR, "table.versions tbody tr")[0]
    made_by = row.find_element(By.CSS_SELECTOR, ".made-by")
    run_id = training_run["name"].rsplit("/", 1)[-1]
    assert run_id in made_by.text and "upload-model" in made_by.text
    row.find_element(By.CSS_SELECTOR, "a.task-link").click()
    WebDriverWait(browser, 30).until(lambda d: "task=upload-model" in d.current_url)
    assert run_id in browser.current_url
    assert browser.find_element(By.CSS_SELECTOR, "section.panel h2").text == "upload-model"
    # and back: the task's output names the model version, linked to its page
    link = browser.find_element(By.CSS_SELECTOR, "section.panel a.resource-link")
    assert model_name(training_run).rsplit("/", 1)[-1] in link.get_attribute("href")


def test_the_endpoint_page_predicts_its_sample_instance_as_written(
    browser: Any, local_cloud: LocalCloud, training_run: dict[str, Any], tmp_path: Path
) -> None:
    from google.cloud import aiplatform

    endpoint = endpoint_name(training_run)
    local_cloud.context().init_aiplatform()
    version = aiplatform.Model(model_name(training_run))
    metadata_uri = version.uri.rstrip("/") + "/model_metadata.json"
    bucket, blob = metadata_uri.removeprefix("gs://").split("/", 1)
    client = local_cloud.context().storage_client()
    metadata = json.loads(client.bucket(bucket).blob(blob).download_as_text())
    open_page(browser, local_cloud, endpoint)
    deployed = browser.find_element(By.CSS_SELECTOR, "table.deployed a.deployed-model")
    assert deployed.text == version.display_name  # its name, not an ID
    prefilled = json.loads(browser.find_element(By.ID, "instances").get_attribute("value"))
    assert prefilled == [metadata["sample_instance"]]
    assert len(prefilled[0]) == len(metadata["feature_columns"])
    order = browser.find_element(By.ID, "feature-order").text
    assert order == ", ".join(metadata["feature_columns"])
    expected = aiplatform.Endpoint(endpoint).predict(instances=prefilled).predictions
    browser.find_element(By.CSS_SELECTOR, "form.predict button").click()  # as prefilled
    shown = WebDriverWait(browser, 60).until(lambda d: d.find_element(By.ID, "prediction"))
    predictions = json.loads(shown.text)["predictions"]
    assert predictions == list(expected) and predictions[0] in metadata["classes"]
    browser.save_screenshot(str(tmp_path / "endpoint-page.png"))


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
    assert set(node_labels(browser).values()) == {"Succeeded"}
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
    back = browser.find_element(By.CSS_SELECTOR, ".made-by a.task-link")  # the job's pipeline task
    assert back.text == "custom-training-job"
    back.click()
    WebDriverWait(browser, 30).until(lambda d: "task=custom-training-job" in d.current_url)
    assert training_run["name"].rsplit("/", 1)[-1] in browser.current_url


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


@dsl.component(install_kfp_package=False)
def scores_roc(labels: list, scores: list, metrics: Output[ClassificationMetrics]):
    from sklearn.metrics import roc_curve

    fpr, tpr, thresholds = roc_curve(labels, scores)
    thresholds = [min(float(t), 1.0) for t in thresholds]  # the first is inf
    metrics.log_roc_curve(fpr.tolist(), tpr.tolist(), thresholds)


@dsl.pipeline(name="console-roc")
def roc_pipeline(labels: list, scores: list):
    scores_roc(labels=labels, scores=scores)


def test_the_roc_chart_shows_the_auc_sklearn_computes(
    browser: Any, local_cloud: LocalCloud, tmp_path: Path
) -> None:
    from sklearn.metrics import roc_auc_score

    labels = [0, 0, 1, 1, 0, 1, 0, 1, 1, 0, 1, 0, 0, 1, 1, 0]
    scores = [0.1, 0.4, 0.35, 0.8, 0.2, 0.7, 0.6, 0.9, 0.3, 0.5, 0.65, 0.05, 0.45, 0.55, 0.95, 0.3]
    expected = roc_auc_score(labels, scores)
    template = tmp_path / "roc.yaml"
    compiler.Compiler().compile(roc_pipeline, str(template))
    params = {"labels": labels, "scores": scores}
    name = create_job(local_cloud, "console-roc", template.read_text(), params)
    job = pipeline_jobs.follow(local_cloud.context(), name, lambda _: None)
    assert job["state"] == "PIPELINE_STATE_SUCCEEDED", job.get("error")
    open_page(browser, local_cloud, name + "?task=scores-roc")
    roc = browser.find_element(By.CSS_SELECTOR, "svg.roc")
    auc = roc.find_element(By.CSS_SELECTOR, "text.auc")
    assert auc.text == f"AUC = {expected:.4f}"
    assert abs(float(auc.get_attribute("data-auc")) - expected) < 1e-6
    ticks = [t.text for t in roc.find_elements(By.CSS_SELECTOR, "text.x-tick")]
    assert ticks == ["0", "0.25", "0.5", "0.75", "1"]
    assert len(roc.find_elements(By.CSS_SELECTOR, "text.y-tick")) == 5


@dsl.component(install_kfp_package=False)
def load_rows(rows: int) -> int:
    if rows < 1:
        raise ValueError(f"no rows to train on: rows={rows}")
    return rows


@dsl.component(install_kfp_package=False)
def train_on(rows: int) -> int:
    return rows


@dsl.pipeline(name="console-failing")
def failing_pipeline(rows: int = 0, deploy: bool = False):
    loaded = load_rows(rows=rows)
    train_on(rows=loaded.output)
    with dsl.If(deploy == True):  # noqa: E712 (a KFP condition, compiled to the IR)
        train_on(rows=1).set_display_name("deploy")


def test_a_failed_run_names_the_failing_task_and_its_cause(
    browser: Any, local_cloud: LocalCloud, tmp_path: Path
) -> None:
    template = tmp_path / "failing.yaml"
    compiler.Compiler().compile(failing_pipeline, str(template))
    name = create_job(local_cloud, "console-failing", template.read_text(), {"rows": 0})
    job = pipeline_jobs.follow(local_cloud.context(), name, lambda _: None)
    assert job["state"] == "PIPELINE_STATE_FAILED"
    open_page(browser, local_cloud, name)
    error = browser.find_element(By.ID, "run-error").text
    assert "load-rows" in error and "no rows to train on: rows=0" in error
    states = node_states(browser)
    assert states["load-rows"] == "FAILED"
    # downstream of the failure and behind a false condition: neither ran, the run is over
    assert states["train-on"] == "NOT_TRIGGERED" and states["train-on-2"] == "NOT_TRIGGERED"
    assert node_labels(browser)["train-on"] == "Not triggered"
    browser.find_element(By.CSS_SELECTOR, "#run-error a").click()
    WebDriverWait(browser, 30).until(lambda d: "task=load-rows" in d.current_url)
    # the runs list filters by state and pipeline
    open_page(browser, local_cloud, "pipelines?state=FAILED&pipeline=console-failing")
    listed = [
        box.get_attribute("value")
        for box in browser.find_elements(By.CSS_SELECTOR, 'input[name="run"]')
    ]
    assert listed == [name]
    open_page(browser, local_cloud, "pipelines?state=SUCCEEDED&pipeline=console-failing")
    assert browser.find_elements(By.CSS_SELECTOR, 'input[name="run"]') == []
