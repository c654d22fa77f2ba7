"""How the driver rewrites a lightweight component's command (real commands from kfp)."""

# No `from __future__ import annotations`: KFP reads the components' real type annotations.

import sys

import pytest
from google.protobuf import json_format
from kfp import dsl

from vertexkit.local.vertex.pipelines.task_handler import (
    TASK_MAIN,
    is_lightweight,
    split_install_prelude,
    through_task_main,
)


def _command(component) -> list[str]:
    container = component.component_spec.implementation.container
    return [*container.command, *container.args]


@dsl.component(base_image="python:3.11", packages_to_install=["humanize", "tabulate==0.9.0"])
def with_packages(n: int) -> str:
    return str(n)


@dsl.component(
    base_image="python:3.11",
    packages_to_install=["humanize"],
    pip_index_urls=["https://mirror.example/simple"],
)
def with_index(n: int) -> str:
    return str(n)


@dsl.component(base_image="python:3.11")
def kfp_only(n: int) -> str:
    return str(n)


@dsl.component(base_image="python:3.11", install_kfp_package=False)
def bare(n: int) -> str:
    return str(n)


@pytest.mark.parametrize(
    ("component", "packages", "options"),
    [
        pytest.param(with_packages, ["humanize", "tabulate==0.9.0"], [], id="packages"),
        pytest.param(
            with_index,
            ["humanize"],
            [
                "--index-url",
                "https://mirror.example/simple",
                "--trusted-host",
                "https://mirror.example/simple",
            ],
            id="index-url",
        ),
        pytest.param(kfp_only, [], [], id="kfp-install-dropped"),
        pytest.param(bare, [], [], id="no-prelude"),
    ],
)
def test_split_install_prelude(component, packages: list, options: list) -> None:
    command, found_packages, found_options = split_install_prelude(_command(component))
    assert (found_packages, found_options) == (packages, options)
    assert command[:2] == ["sh", "-ec"] and "pip install" not in " ".join(command[:3])
    rewritten = through_task_main(command, sys.executable)
    assert f"{sys.executable} -m {TASK_MAIN}" in rewritten[2]
    assert rewritten[3:] == command[3:]  # the component's source and arguments, untouched


def test_a_container_component_is_not_lightweight() -> None:
    @dsl.container_component
    def echo():
        return dsl.ContainerSpec(image="alpine:3.20", command=["echo"], args=["hi"])

    assert not is_lightweight(_command(echo))
    assert is_lightweight(_command(bare))


# -- GCPC operators run their own launcher; other container components are refused -------------
def _gcpc_ops() -> list:
    from google_cloud_pipeline_components.v1.bigquery import BigqueryQueryJobOp
    from google_cloud_pipeline_components.v1.custom_job import CustomTrainingJobOp
    from google_cloud_pipeline_components.v1.endpoint import EndpointCreateOp, ModelDeployOp
    from google_cloud_pipeline_components.v1.model import ModelUploadOp

    return [BigqueryQueryJobOp, CustomTrainingJobOp, EndpointCreateOp, ModelDeployOp, ModelUploadOp]


def _compiled_container(component) -> dict:
    """The container as the executor gets it: from the compiled IR, placeholders as text."""
    spec = json_format.MessageToDict(component.pipeline_spec)
    [executor] = spec["deploymentSpec"]["executors"].values()
    return executor["container"]


@pytest.mark.parametrize("op", _gcpc_ops(), ids=lambda op: op.name)
def test_a_gcpc_operator_runs_its_launcher_through_gcpc_main(op) -> None:
    from vertexkit.local.vertex.pipelines.task_handler import (
        GCPC_MAIN,
        gcpc_launcher,
        refuse_unless_runnable,
        through_gcpc_main,
    )

    container = _compiled_container(op)
    command = [*container["command"], *container.get("args", [])]
    module = gcpc_launcher(container["image"], command)
    assert module and module.startswith("google_cloud_pipeline_components.container.")
    refuse_unless_runnable("op", container)  # not refused
    local = through_gcpc_main(command, sys.executable)
    assert local[:5] == [sys.executable, "-u", "-m", GCPC_MAIN, module]
    assert local[5:] == command[4:]  # the launcher's own arguments, unchanged


@dsl.container_component
def gcpc_lookalike():
    """GCPC's module name in another image: not GCPC's launcher; python3 exists here."""
    return dsl.ContainerSpec(
        image="alpine:3.20",
        command=["python3", "-u", "-m", "google_cloud_pipeline_components.container.v1.x"],
    )


@dsl.container_component
def shell_step():
    return dsl.ContainerSpec(image="gcr.io/ml-pipeline/google-cloud-pipeline-components:2.22.0",
                             command=["sh", "-c", "echo hi"])  # fmt: skip


@dsl.container_component
def own_binary():
    return dsl.ContainerSpec(image="us-docker.pkg.dev/p/r/trainer:1", command=["/opt/app/train"])


@pytest.mark.parametrize(
    "component", [gcpc_lookalike, shell_step], ids=["other-image", "gcpc-image-not-a-launcher"]
)
def test_a_container_whose_program_exists_here_runs_as_a_local_process(component) -> None:
    # The same rule as a custom job's container (training/execution.py): its command runs here.
    from vertexkit.local.vertex.pipelines.task_handler import refuse_unless_runnable

    refuse_unless_runnable("step", _compiled_container(component))  # not refused


def test_a_container_whose_program_is_not_here_is_refused_naming_task_and_image() -> None:
    from vertexkit.local.vertex.pipelines.task_handler import TaskRefused, refuse_unless_runnable

    container = _compiled_container(own_binary)
    with pytest.raises(TaskRefused, match="no Docker here") as refused:
        refuse_unless_runnable("train", container)
    assert repr(container["image"]) in str(refused.value) and "'train'" in str(refused.value)
