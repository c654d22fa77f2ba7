"""A tabular dataset's versions, export, import and (absent) data items through the SDK
(`aiplatform.TabularDataset.export_data`) and `aiplatform_v1.DatasetServiceClient` over REST,
against the local cloud. Expected values are the REST reference's
(cloud.google.com/vertex-ai/docs/reference/rest/v1/projects.locations.datasets...)."""

from __future__ import annotations

import pytest
from google.api_core import exceptions
from google.auth.credentials import AnonymousCredentials
from google.cloud import aiplatform, aiplatform_v1

from vertexkit.context import CloudContext

CSV = "species,body_mass_g\n" + "".join(f"Adelie,{3000 + i}\n" for i in range(10))
OTHER = "gs://vertexkit-data/versions/other.csv"


@pytest.fixture
def sdk(cloud_context: CloudContext) -> CloudContext:
    client = cloud_context.storage_client()
    for bucket in ("vertexkit-staging", "vertexkit-data"):
        if client.lookup_bucket(bucket) is None:
            client.create_bucket(bucket)
    client.bucket("vertexkit-data").blob("versions/rows.csv").upload_from_string(CSV)
    client.bucket("vertexkit-data").blob("versions/other.csv").upload_from_string(CSV)
    cloud_context.init_aiplatform(staging_bucket="gs://vertexkit-staging")
    return cloud_context


@pytest.fixture
def dataset(sdk: CloudContext) -> aiplatform.TabularDataset:
    return aiplatform.TabularDataset.create(
        display_name="versioned", gcs_source=["gs://vertexkit-data/versions/rows.csv"]
    )


def client(sdk: CloudContext) -> aiplatform_v1.DatasetServiceClient:
    return aiplatform_v1.DatasetServiceClient(
        credentials=AnonymousCredentials(), transport="rest",
        client_options=sdk.vertex_client_options(),
    )  # fmt: skip


def test_a_version_snapshots_the_metadata_and_restore_brings_it_back(
    sdk: CloudContext, dataset: aiplatform.TabularDataset
) -> None:
    api = client(sdk)
    version = api.create_dataset_version(
        parent=dataset.resource_name, dataset_version={"display_name": "v1"}
    ).result()
    assert version.name.startswith(f"{dataset.resource_name}/datasetVersions/")
    assert version.metadata["inputConfig"]["gcsSource"]["uri"] == [
        "gs://vertexkit-data/versions/rows.csv"
    ]
    patched = api.update_dataset_version(
        dataset_version={"name": version.name, "display_name": "v1-renamed"},
        update_mask={"paths": ["display_name"]},
    )
    assert patched.display_name == "v1-renamed"
    before = api.get_dataset(name=dataset.resource_name)
    # RestoreDatasetVersion's operation_info: the response type is DatasetVersion.
    restored = api.restore_dataset_version(name=version.name).result()
    assert restored.name == version.name
    after = api.get_dataset(name=dataset.resource_name)
    assert after.update_time > before.update_time
    assert after.metadata["inputConfig"]["gcsSource"]["uri"] == [
        "gs://vertexkit-data/versions/rows.csv"
    ]
    listed = [v.name for v in api.list_dataset_versions(parent=dataset.resource_name)]
    assert listed == [version.name]
    api.delete_dataset_version(name=version.name).result()
    with pytest.raises(exceptions.NotFound):
        api.get_dataset_version(name=version.name)


def test_a_version_patch_outside_display_name_is_refused(
    sdk: CloudContext, dataset: aiplatform.TabularDataset
) -> None:
    api = client(sdk)
    version = api.create_dataset_version(parent=dataset.resource_name, dataset_version={}).result()
    # Reference: updateMask "Updatable fields: display_name".
    with pytest.raises(exceptions.BadRequest, match="display_name"):
        api.update_dataset_version(
            dataset_version={"name": version.name, "etag": "x"}, update_mask={"paths": ["etag"]}
        )


def test_export_writes_the_splits_under_an_export_data_folder(
    sdk: CloudContext, dataset: aiplatform.TabularDataset
) -> None:
    files = dataset.export_data("gs://vertexkit-data/exports")
    # Reference (ExportDataConfig.gcsDestination): a new directory export-data-<display name>-
    # <timestamp> under the prefix; three files, one per split.
    assert len(files) == 3
    assert all(f.startswith("gs://vertexkit-data/exports/export-data-versioned-") for f in files)
    blobs = sdk.storage_client().list_blobs("vertexkit-data", prefix="exports/export-data-")
    texts = [b.download_as_text() for b in blobs if b.name.endswith("training-00000-of-00001.csv")]
    assert texts[-1].startswith("species,body_mass_g\n")
    assert len(texts[-1].splitlines()) == 1 + 8  # 80% of the 10 rows, the default split


def test_export_for_custom_training_answers_wildcards(
    sdk: CloudContext, dataset: aiplatform.TabularDataset
) -> None:
    response = dataset.export_data_for_custom_training(
        "gs://vertexkit-data/custom",
        split={"training_fraction": 0.5, "validation_fraction": 0.3, "test_fraction": 0.2},
    )
    # Reference (ExportDataResponse.exportedFiles): for custom code training only the three
    # training, validation and test paths in wildcard format, e.g. gs://.../training-*.
    assert [f.rsplit("/", 1)[1] for f in response["exportedFiles"]] == [
        "training-*", "validation-*", "test-*",
    ]  # fmt: skip


def test_import_into_a_tabular_dataset_is_a_failed_precondition(
    sdk: CloudContext, dataset: aiplatform.TabularDataset
) -> None:
    config = {"gcs_source": {"uris": [OTHER]}, "import_schema_uri": "gs://x/schema.yaml"}
    # FAILED_PRECONDITION travels as HTTP 400 (google.rpc.Code mapping), so the REST client
    # raises BadRequest; the status names the code.
    with pytest.raises(exceptions.BadRequest, match="tabular") as refused:
        client(sdk).import_data(name=dataset.resource_name, import_configs=[config])
    assert refused.value.response.json()["error"]["status"] == "FAILED_PRECONDITION"
    with pytest.raises(exceptions.BadRequest, match="importConfigs"):
        client(sdk).import_data(name=dataset.resource_name, import_configs=[])


def test_a_tabular_dataset_has_no_data_items_or_saved_queries(
    sdk: CloudContext, dataset: aiplatform.TabularDataset
) -> None:
    api = client(sdk)
    assert list(api.list_data_items(parent=dataset.resource_name)) == []
    assert list(api.list_saved_queries(parent=dataset.resource_name)) == []
    with pytest.raises(exceptions.NotFound):
        api.get_annotation_spec(name=f"{dataset.resource_name}/annotationSpecs/1")
    with pytest.raises(exceptions.NotFound):
        list(api.list_annotations(parent=f"{dataset.resource_name}/dataItems/1"))
    missing = dataset.resource_name.rsplit("/", 1)[0] + "/404"
    with pytest.raises(exceptions.NotFound):
        list(api.list_data_items(parent=missing))
