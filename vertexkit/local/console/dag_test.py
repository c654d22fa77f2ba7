"""The run graph from a compiled spec: leaves, groups, data and order edges, layers, SVG."""

from __future__ import annotations

from typing import Any

import pytest

from vertexkit.local.console import dag


def task(component: str, *after: str, reads: dict[str, str] | None = None) -> dict[str, Any]:
    inputs = {
        name: {"taskOutputArtifact": {"producerTask": producer, "outputArtifactKey": "out"}}
        for name, producer in (reads or {}).items()
    }
    return {
        "componentRef": {"name": component},
        "dependentTasks": list(after),
        "inputs": {"artifacts": inputs},
    }


# load -> train (reads data) -> [condition-1: deploy] ; report runs after load (order only)
SPEC: dict[str, Any] = {
    "root": {
        "dag": {
            "tasks": {
                "load": task("comp-load"),
                "train": task("comp-train", "load", reads={"data": "load"}),
                "report": task("comp-report", "load"),
                "condition-1": {
                    **task("comp-condition-1", "train"),
                    "triggerPolicy": {
                        "condition": "inputs.parameter_values['pipelinechannel--train-won'] == true"
                    },
                },
            }
        }
    },
    "components": {
        "comp-condition-1": {"dag": {"tasks": {"deploy": task("comp-deploy")}}},
    },
}


def test_leaves_are_nodes_and_sub_dags_are_groups() -> None:
    graph = dag.build_graph(SPEC)
    assert set(graph.nodes) == {"load", "train", "report", "deploy"}
    assert graph.nodes["deploy"].groups == ("condition-1",)
    assert graph.groups["condition-1"].label == "condition-1: if train-won == true"


@pytest.mark.parametrize(
    ("source", "target", "data"),
    [
        pytest.param("load", "train", True, id="artifact-read-is-a-data-edge"),
        pytest.param("load", "report", False, id="after-only-is-an-order-edge"),
        pytest.param("train", "deploy", False, id="task-in-group-inherits-group-dependency"),
    ],
)
def test_edges(source: str, target: str, data: bool) -> None:
    assert (source, target, data) in dag.build_graph(SPEC).edges


def test_layers_put_each_task_below_its_producers() -> None:
    graph = dag.build_graph(SPEC)
    assert [set(rank) for rank in dag.layers(graph)] == [{"load"}, {"train", "report"}, {"deploy"}]
    assert graph.nodes["load"].y < graph.nodes["train"].y < graph.nodes["deploy"].y
    assert graph.nodes["train"].y == graph.nodes["report"].y


def test_nodes_in_one_layer_do_not_overlap() -> None:
    graph = dag.build_graph(SPEC)
    left, right = sorted((graph.nodes["train"], graph.nodes["report"]), key=lambda n: n.x)
    assert right.x >= left.x + dag.NODE_WIDTH
    assert max(n.x for n in graph.nodes.values()) + dag.NODE_WIDTH <= graph.width


def test_a_dependency_on_a_group_is_one_on_each_of_its_tasks() -> None:
    spec = {
        "root": {
            "dag": {
                "tasks": {
                    **SPEC["root"]["dag"]["tasks"],
                    "notify": task("comp-notify", "condition-1"),
                }
            }
        },
        "components": SPEC["components"],
    }
    assert ("deploy", "notify", False) in dag.build_graph(spec).edges


def test_svg_has_one_node_per_task_with_its_state_and_escapes_names() -> None:
    spec = {"root": {"dag": {"tasks": {"<b>x</b>": task("comp-x")}}}, "components": {}}
    graph = dag.build_graph(spec)
    svg = dag.draw(graph, {"<b>x</b>": "RUNNING"}, {"<b>x</b>": "/console/r?task=x"})
    assert 'class="task state-RUNNING"' in svg
    assert "<b>x</b>" not in svg and "&lt;b&gt;x&lt;/b&gt;" in svg


def test_a_task_not_started_yet_is_pending() -> None:
    graph = dag.build_graph(SPEC)
    svg = dag.draw(graph, {}, {name: "#" for name in graph.nodes})
    assert svg.count("state-PENDING") == 4


def test_a_parallel_for_is_a_group_named_as_a_loop() -> None:
    spec = {
        "root": {
            "dag": {
                "tasks": {
                    "for-loop-1": {
                        "componentRef": {"name": "comp-for-loop-1"},
                        "parameterIterator": {"itemInput": "item", "items": {"raw": "[1, 2]"}},
                    }
                }
            }
        },
        "components": {"comp-for-loop-1": {"dag": {"tasks": {"train": task("comp-train")}}}},
    }
    graph = dag.build_graph(spec)
    assert graph.groups["for-loop-1"].label == "for-loop-1: for each item"
    assert graph.nodes["train"].groups == ("for-loop-1",)
