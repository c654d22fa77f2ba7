"""The data half of the component runtime against the local cloud: BigQuery jobs, exports,
Cloud Storage datasets, trainer packaging; and the three data components under kfp.local."""

from __future__ import annotations

import json
import subprocess
import sys
import tarfile
from pathlib import Path

import pandas as pd
import pytest
from kfp import dsl, local

from vertexkit.context import CloudContext
from vertexkit.runtime import bigquery, datasets, packaging
from vertexkit.runtime.gcp_resources import read_gcp_resources
from vertexkit.specs import SpecError

PENGUINS = "bigquery-public-data.ml_datasets.penguins"
BUCKET = "data-runtime-test"
TRAINER_DIR = Path(__file__).resolve().parents[1] / "trainers" / "tabular"


@pytest.fixture(scope="module")
def bucket(local_cloud: object) -> str:
    client = local_cloud.context().storage_client()  # type: ignore[attr-defined]
    if not client.bucket(BUCKET).exists():
        client.create_bucket(BUCKET)
    local_cloud.context().bigquery_client().create_dataset("runtime_test", exists_ok=True)  # type: ignore[attr-defined]
    return BUCKET


# -- BigQuery query job ----------------------------------------------------------------------
def test_query_job_types_parameters_and_resumes_from_gcp_resources(
    cloud_context: CloudContext, bucket: str, tmp_path: Path
) -> None:
    path = str(tmp_path / "gcp_resources")
    sql = (
        f"SELECT species, COUNT(*) AS n FROM `{PENGUINS}` "
        "WHERE island = @island AND body_mass_g > @mass AND sex IN UNNEST(@sexes) GROUP BY species"
    )
    params = {"island": "Biscoe", "mass": 4000.5, "sexes": ["MALE", "FEMALE", "male", "female"]}
    first = bigquery.run_query_job(
        cloud_context, sql, params, "runtime_test.by_species", gcp_resources_path=path
    )
    assert first.table == f"{cloud_context.project}.runtime_test.by_species"
    expected = cloud_context.bigquery_client().query(
        f"SELECT COUNT(DISTINCT species) AS k FROM `{PENGUINS}` "
        "WHERE island = 'Biscoe' AND body_mass_g > 4000.5 AND sex IS NOT NULL"
    )
    assert first.rows == next(iter(expected.result()))["k"] > 0
    [resource] = read_gcp_resources(path)
    assert resource.resource_type == "BigQueryJob" and first.job_id in resource.resource_uri

    # A retry with the same gcp_resources resumes the recorded job: no second job.
    again = bigquery.run_query_job(
        cloud_context, sql, params, "runtime_test.by_species", gcp_resources_path=path
    )
    assert again.job_id == first.job_id
    assert len(read_gcp_resources(path)) == 1


def test_query_job_errors_name_the_field_before_any_job(cloud_context: CloudContext) -> None:
    with pytest.raises(SpecError, match=r"write_disposition.*WRITE_TRUNCATE"):
        bigquery.run_query_job(cloud_context, "SELECT 1", destination="d.t", write_disposition="x")
    with pytest.raises(SpecError, match="destination"):
        bigquery.run_query_job(cloud_context, "SELECT 1", destination="not a table")
    with pytest.raises(SpecError, match=r"params\.when"):
        bigquery.run_query_job(cloud_context, "SELECT @when", params={"when": object()})
    with pytest.raises(bigquery.BigQueryJobError, match=r"(?i)not found"):
        bigquery.run_query_job(cloud_context, "SELECT * FROM runtime_test.no_such_table")


# -- export into splits ----------------------------------------------------------------------
def test_export_splits_deterministically_by_fractions(
    cloud_context: CloudContext, bucket: str, tmp_path: Path
) -> None:
    source = "SELECT id, MOD(id, 7) AS feature FROM UNNEST(GENERATE_ARRAY(1, 5000)) AS id"
    prefix = f"gs://{bucket}/export-ids"
    path = str(tmp_path / "gcp_resources")
    result = bigquery.export_dataset(
        cloud_context,
        prefix,
        query=source,
        split_key_column="id",
        fractions=(0.6, 0.3, 0.1),
        gcp_resources_path=path,
    )
    rows = {name: split.rows for name, split in result.splits.items()}
    assert sum(rows.values()) == 5000
    for name, fraction in (("train", 0.6), ("validation", 0.3), ("test", 0.1)):
        assert abs(rows[name] / 5000 - fraction) < 0.03, rows
    assert len(read_gcp_resources(path)) == 6  # a query and an extract per split

    options = cloud_context.storage_options()
    frames = {
        name: pd.read_parquet(split.uri.rsplit("/", 1)[0], storage_options=options)
        for name, split in result.splits.items()
    }
    assert {name: len(frame) for name, frame in frames.items()} == rows
    ids = [set(frame["id"]) for frame in frames.values()]
    assert not (ids[0] & ids[1] or ids[0] & ids[2] or ids[1] & ids[2])

    # Same key, same split: a second export (new gcp_resources) reproduces the test split.
    again = bigquery.export_dataset(
        cloud_context, f"{prefix}-again", query=source, split_key_column="id",
        fractions=(0.6, 0.3, 0.1), format="jsonl",
    )  # fmt: skip
    test_again = pd.read_json(
        again.splits["test"].uri.replace("data-*.jsonl", "data-000000000000.jsonl"),
        lines=True,
        storage_options=options,
    )
    assert set(test_again["id"]) == set(frames["test"]["id"])


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"fractions": (0.5, 0.3, 0.3)}, "fractions"),
        ({"fractions": (0.0, 0.5, 0.5)}, "fractions"),
        ({"format": "AVRO"}, "format"),
        ({"source_table": "bad name!"}, "source_table"),
        ({"source_table": PENGUINS, "query": "SELECT 1"}, "source_table"),
        ({"split_key_column": "a; DROP"}, "split_key_column"),
    ],
)
def test_export_rejects_bad_input(
    cloud_context: CloudContext, kwargs: dict, field: str, tmp_path: Path
) -> None:
    kwargs = {"source_table": PENGUINS, **kwargs} if "query" not in kwargs else kwargs
    path = tmp_path / "gcp_resources"
    with pytest.raises(SpecError) as error:
        bigquery.export_dataset(
            cloud_context, "gs://data-runtime-test/bad", gcp_resources_path=str(path), **kwargs
        )
    assert error.value.field == field
    assert not path.exists()  # nothing was created


# -- Cloud Storage datasets ------------------------------------------------------------------
def test_describe_gcs_dataset_counts_rows_and_names_problems(
    cloud_context: CloudContext, bucket: str
) -> None:
    options = cloud_context.storage_options()
    frame = pd.DataFrame({"a": range(10), "b": list("abcdefghij")})
    frame.iloc[:4].to_parquet(f"gs://{bucket}/ds/part-0.parquet", storage_options=options)
    frame.iloc[4:].to_parquet(f"gs://{bucket}/ds/part-1.parquet", storage_options=options)
    frame.to_csv(f"gs://{bucket}/csv/all.csv", index=False, storage_options=options)
    blob = cloud_context.storage_client().bucket(bucket).blob("mixed/x.txt")
    blob.upload_from_string("hello")

    described = datasets.describe_gcs_dataset(cloud_context, f"gs://{bucket}/ds/part-*.parquet")
    assert (described.rows, described.format, described.columns) == (10, "parquet", ["a", "b"])
    assert len(described.files) == 2
    assert datasets.describe_gcs_dataset(cloud_context, f"gs://{bucket}/csv").rows == 10
    with pytest.raises(datasets.DatasetError, match="no objects match"):
        datasets.describe_gcs_dataset(cloud_context, f"gs://{bucket}/nothing/*.parquet")
    with pytest.raises(datasets.DatasetError, match="cannot tell the format"):
        datasets.describe_gcs_dataset(cloud_context, f"gs://{bucket}/mixed")
    with pytest.raises(datasets.DatasetError, match="not readable as parquet"):
        datasets.describe_gcs_dataset(cloud_context, f"gs://{bucket}/csv/all.csv", "parquet")
    with pytest.raises(SpecError, match="format"):
        datasets.describe_gcs_dataset(cloud_context, f"gs://{bucket}/csv", "xlsx")


# -- packaging -------------------------------------------------------------------------------
def test_trainer_sdist_is_cached_staged_and_installable(
    cloud_context: CloudContext, bucket: str, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    sdist = packaging.build_sdist(TRAINER_DIR, cache)
    assert packaging.build_sdist(TRAINER_DIR, cache) == sdist  # same content, same file
    assert packaging.content_hash(TRAINER_DIR) in sdist.name
    with tarfile.open(sdist) as archive:
        assert any(n.endswith("tabular_trainer/task.py") for n in archive.getnames())

    uri = packaging.stage_trainer(cloud_context, TRAINER_DIR, f"gs://{bucket}/staging", cache)
    assert uri == f"gs://{bucket}/staging/trainers/{sdist.name}"
    blob = cloud_context.storage_client().bucket(bucket).get_blob(uri.split("/", 3)[3])
    assert blob is not None and blob.size == sdist.stat().st_size

    # Installable the way Vertex installs packageUris (pip), then runnable as a module.
    target = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
         "--target", str(target), str(sdist)],
        check=True, capture_output=True,
    )  # fmt: skip
    assert (target / "tabular_trainer" / "task.py").is_file()

    copy = tmp_path / "trainer"
    copy.mkdir()
    (copy / "pyproject.toml").write_text((TRAINER_DIR / "pyproject.toml").read_text())
    assert packaging.content_hash(copy) != packaging.content_hash(TRAINER_DIR)
    with pytest.raises(packaging.PackagingError, match=r"pyproject\.toml"):
        packaging.build_sdist(tmp_path / "site", cache)


def test_prebuilt_images() -> None:
    assert packaging.prebuilt_serving_image("sklearn", "1.4") == (
        "us-docker.pkg.dev/vertex-ai/prediction/sklearn-cpu.1-4:latest"
    )
    assert packaging.prebuilt_serving_image("xgboost", "2-0").endswith("xgboost-cpu.2-0:latest")
    assert packaging.prebuilt_training_image("scikit-learn") == (
        "us-docker.pkg.dev/vertex-ai/training/sklearn-cpu.1-6:latest"
    )
    with pytest.raises(SpecError, match="allowed"):
        packaging.prebuilt_training_image("sklearn", "0.1")
    with pytest.raises(SpecError, match="unknown framework"):
        packaging.prebuilt_serving_image("caffe")


# -- components under kfp.local --------------------------------------------------------------
def test_data_components_run_under_kfp_local(
    cloud_context: CloudContext, bucket: str, tmp_path: Path
) -> None:
    from vertexkit.components import bigquery_export_dataset, bigquery_query_job, gcs_dataset

    local.init(runner=local.SubprocessRunner(use_venv=False), pipeline_root=str(tmp_path))

    prefix = f"gs://{bucket}/kfp-export"

    # No parameters: this module's postponed annotations would reach KFP as strings.
    @dsl.pipeline
    def data_pipeline():
        table = bigquery_query_job(
            query=f"SELECT * FROM `{PENGUINS}` WHERE island = @island",
            query_parameters={"island": "Dream"},
            destination="runtime_test.dream",
        )
        exported = bigquery_export_dataset(
            gcs_prefix=prefix, source_table="runtime_test.dream"
        ).after(table)
        # The export writes below a folder of its own per execution: <prefix>/run-<id>/.
        gcs_dataset(uri=prefix + "/run-*/train/data-*.parquet").after(exported)

    task = data_pipeline()
    assert task is not None
    (train_folder,) = cloud_context.gcs_filesystem().glob(f"{bucket}/kfp-export/run-*/train")
    exported = pd.read_parquet(
        f"gs://{train_folder}", storage_options=cloud_context.storage_options()
    )
    assert set(exported["island"]) == {"Dream"}
    gcp_files = list(tmp_path.rglob("gcp_resources"))
    assert gcp_files and all(json.loads(p.read_text()).get("resources") for p in gcp_files)
