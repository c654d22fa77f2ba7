"""The prebuilt image tables: the choice per framework/version/accelerator and its refusals."""

from __future__ import annotations

import pytest

from vertexkit.runtime.prebuilt import prebuilt_framework
from vertexkit.specs import SpecError, catalog, images
from vertexkit.specs.inputs import check_component_inputs

TRAINING = "us-docker.pkg.dev/vertex-ai/training/"
PREDICTION = "us-docker.pkg.dev/vertex-ai/prediction/"


@pytest.mark.parametrize(
    ("framework", "version", "accelerator", "machine", "image"),
    [
        ("tensorflow", "", "", "", "tf-cpu.2-17.py310"),
        ("tensorflow", "2.17", "NVIDIA_L4", "g2-standard-8", "tf-gpu.2-17.py310"),
        ("tf", "2-14", "NVIDIA_TESLA_T4", "n1-standard-8", "tf-gpu.2-14.py310"),
        ("tensorflow", "", "TPU_V2", "cloud-tpu", "tf-tpu.2-15.cp310"),
        ("pytorch", "", "NVIDIA_H100_80GB", "a3-highgpu-8g", "pytorch-gpu.2-4.py310"),
        ("pytorch", "2.1.2", "", "n1-standard-4", "pytorch-xla.2-1.py310"),
        ("pytorch", "", "TPU_V3", "cloud-tpu", "pytorch-tpu.2-2.cp310"),
        ("scikit-learn", "", "", "", "sklearn-cpu.1-6"),
        ("sklearn", "1.0", "NVIDIA_TESLA_T4", "n1-standard-4", "sklearn-gpu.1-0"),
        ("xgboost", "1.1", "", "", "xgboost-cpu.1-1"),
    ],
    ids=[
        "tf-cpu-latest", "tf-l4", "tf-alias-t4", "tf-tpu-latest-with-tpu", "torch-h100",
        "torch-cpu-patch-version", "torch-tpu", "sklearn-alias", "sklearn-gpu", "xgboost-old-cpu",
    ],
)  # fmt: skip
def test_training_image_follows_framework_version_and_accelerator(
    framework: str, version: str, accelerator: str, machine: str, image: str
) -> None:
    chosen = images.training_image(framework, version, accelerator, machine)
    assert chosen == f"{TRAINING}{image}:latest"


@pytest.mark.parametrize(
    ("framework", "version", "accelerator", "field", "names"),
    [
        ("sklearn", "0.23", "NVIDIA_TESLA_T4", "framework_version", ["sklearn 0.23", "T4 (GPU)"]),
        ("xgboost", "1.1", "NVIDIA_L4", "framework_version", ["xgboost 1.1", "NVIDIA_L4 (GPU)"]),
        ("pytorch", "2.4", "TPU_V3", "framework_version", ["pytorch 2.4", "TPU_V3 (TPU)"]),
        ("sklearn", "", "TPU_V2", "framework", ["sklearn", "TPU_V2 (TPU)", "none"]),
        ("pytorch", "1.13", "", "framework_version", ["'1.13'", "allowed"]),
        ("caffe", "", "", "framework", ["'caffe'", "pytorch", "sklearn"]),
    ],
    ids=[
        "gpu-missing", "gpu-missing-old", "tpu-missing", "no-tpu-at-all", "unknown-version",
        "unknown-framework",
    ],
)  # fmt: skip
def test_training_image_refusals_name_framework_version_and_accelerator(
    framework: str, version: str, accelerator: str, field: str, names: list[str]
) -> None:
    with pytest.raises(SpecError) as refused:
        images.training_image(framework, version, accelerator)
    assert refused.value.field == field
    for name in names:
        assert name in str(refused.value)


@pytest.mark.parametrize(
    ("framework", "version", "accelerator", "image"),
    [
        ("sklearn", "", "", "sklearn-cpu.1-6"),
        ("xgboost", "2-0", "", "xgboost-cpu.2-0"),
        ("tensorflow", "2.14", "NVIDIA_TESLA_T4", "tf2-gpu.2-14"),
        ("pytorch", "", "NVIDIA_L4", "pytorch-gpu.2-4"),
    ],
    ids=["sklearn-latest", "xgboost-2.0", "tf-gpu", "torch-gpu"],
)
def test_prediction_image_follows_framework_version_and_accelerator(
    framework: str, version: str, accelerator: str, image: str
) -> None:
    assert images.prediction_image(framework, version, accelerator) == f"{PREDICTION}{image}:latest"


def test_prediction_image_refuses_gpu_for_a_cpu_only_framework() -> None:
    with pytest.raises(SpecError) as refused:
        images.prediction_image("sklearn", "1.5", "NVIDIA_TESLA_T4")
    assert refused.value.field == "framework_version"
    assert "sklearn 1.5" in str(refused.value) and "NVIDIA_TESLA_T4" in str(refused.value)


def every_image(use: str) -> list[tuple[str, str, str]]:
    table = getattr(images.image_tables(), use)
    return [
        (framework, kind, uri)
        for framework, versions in table.items()
        for kinds in versions.values()
        for kind, uri in kinds.items()
    ]


@pytest.mark.parametrize(("framework", "kind", "uri"), every_image("prediction"))
def test_serving_recognises_every_prediction_image(framework: str, kind: str, uri: str) -> None:
    # prebuilt.py names TensorFlow 2 images "tf2", as their URIs do.
    expected = {"tensorflow": "tf2"}.get(framework, framework)
    assert prebuilt_framework(uri) == expected
    assert uri.startswith(PREDICTION) and uri.endswith(":latest")


@pytest.mark.parametrize(("framework", "kind", "uri"), every_image("training"))
def test_training_images_are_us_uris_of_their_kind(framework: str, kind: str, uri: str) -> None:
    assert uri.startswith(TRAINING) and uri.endswith(":latest")
    assert kind in images.KINDS
    name = uri.removeprefix(TRAINING).split(".")[0]
    assert kind.lower() in name or (kind == "CPU" and name.endswith("-xla"))


def test_reduction_server_image_lives_once_in_images_json() -> None:
    image = images.image_tables().reduction_server_image
    assert image.endswith(":latest")
    assert catalog().reduction_server_image == image.rsplit(":", 1)[0]


TRAINING_INPUTS = {
    "framework": "sklearn",
    "framework_version": "0.23",
    "machine_type": "n1-standard-8",
    "accelerator_type": "NVIDIA_TESLA_T4",
    "accelerator_count": 1,
    "executor_image_uri": "",
    "container_image_uri": "",
}


@pytest.mark.parametrize("component", ["custom_training_job", "hyperparameter_tuning_job"])
def test_component_inputs_refuse_a_version_without_a_gpu_image(component: str) -> None:
    with pytest.raises(SpecError) as refused:
        check_component_inputs(component, TRAINING_INPUTS)
    assert refused.value.field == "framework_version"
    assert "sklearn 0.23" in str(refused.value) and "NVIDIA_TESLA_T4" in str(refused.value)


@pytest.mark.parametrize(
    "given",
    [
        {"executor_image_uri": "us-docker.pkg.dev/p/r/my-trainer:1"},
        {"container_image_uri": "us-docker.pkg.dev/p/r/app:1"},
        {"framework_version": "1.6"},
        {"framework": ""},
    ],
    ids=["own-executor-image", "own-container", "version-with-gpu-image", "no-framework"],
)
def test_component_inputs_accept_what_has_an_image(given: dict) -> None:
    check_component_inputs("custom_training_job", TRAINING_INPUTS | given)


# -- drift against the aiplatform SDK's own table --------------------------------------------
# images.json is the static table task processes read instead of importing
# `google.cloud.aiplatform.constants` (about 2 s). The SDK (installed here) keeps its own list of
# prebuilt prediction images; these tests read both and fail when they drift apart.
def sdk_prediction_images() -> dict[str, dict[str, dict[str, str]]]:
    """{framework: {kind: {version: URI}}} of the SDK's us-docker prediction images."""
    from google.cloud.aiplatform.constants import prediction

    by_region = prediction._SERVING_CONTAINER_URI_MAP
    return {
        framework: {kind.upper(): dict(versions) for kind, versions in kinds.items()}
        for framework, kinds in by_region["us"].items()
    }


def sdk_kinds() -> list[tuple[str, str]]:
    return sorted((f, k) for f, kinds in sdk_prediction_images().items() for k in kinds)


def newest(versions: object) -> str:
    return max(versions, key=images.version_key)  # type: ignore[call-overload]


@pytest.mark.parametrize(
    ("framework", "version", "kind", "uri"),
    [
        (framework, version, kind, uri)
        for framework, versions in images.image_tables().prediction.items()
        for version, kinds in versions.items()
        for kind, uri in kinds.items()
        if kind != "TPU"  # the SDK lists no TPU prediction images at all
    ],
)
def test_every_prediction_image_is_the_one_the_sdk_lists(
    framework: str, version: str, kind: str, uri: str
) -> None:
    assert sdk_prediction_images()[framework][kind].get(version) == uri


@pytest.mark.parametrize(("framework", "kind"), sdk_kinds())
def test_the_newest_prediction_image_is_the_sdks_newest(framework: str, kind: str) -> None:
    # A new SDK that adds a version (sklearn 1.7, ...) fails here: add its row to images.json.
    ours = images.image_tables().prediction[framework]
    having = [version for version, kinds in ours.items() if kind in kinds]
    assert newest(having) == newest(sdk_prediction_images()[framework][kind])


def test_every_sdk_framework_has_prediction_images() -> None:
    assert set(sdk_prediction_images()) == set(images.image_tables().prediction)
