"""How the driver rewrites a lightweight component's command (real commands from kfp)."""

# No `from __future__ import annotations`: KFP reads the components' real type annotations.

import sys

import pytest
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
