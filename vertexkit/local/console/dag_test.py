"""The run graph from a compiled spec: leaves, groups, data and order edges, layers, SVG."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

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


def sampled(points: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """Points along the drawn edge: each gap's cubic curve (as `edge_path` draws it) and each
    straight drop, 40 samples a piece."""
    out = []
    for index in range(len(points) - 1):
        (x1, y1), (x2, y2) = points[index], points[index + 1]
        for step in range(41):
            t = step / 40
            if index % 2 == 0:  # C x1,mid x2,mid x2,y2
                mid = (y1 + y2) / 2
                x = (
                    (1 - t) ** 3 * x1
                    + 3 * (1 - t) ** 2 * t * x1
                    + 3 * (1 - t) * t**2 * x2
                    + t**3 * x2
                )
                y = (1 - t) ** 3 * y1 + 3 * (1 - t) ** 2 * t * mid + 3 * (1 - t) * t**2 * mid
                y += t**3 * y2
            else:
                x, y = x1 + (x2 - x1) * t, y1 + (y2 - y1) * t
            out.append((x, y))
    return out


def crossings(graph: dag.Graph) -> list[tuple[str, str]]:
    """(edge, node) for each edge that passes inside a task's box other than its own ends."""
    found = []
    for edge in graph.edges:
        for x, y in sampled(dag.route(graph, edge)):
            for name, node in graph.nodes.items():
                inside = node.x + 1 < x < node.x + dag.NODE_WIDTH - 1
                if (
                    name not in edge[:2]
                    and inside
                    and node.y + 1 < y < node.y + dag.NODE_HEIGHT - 1
                ):
                    found.append((f"{edge[0]}->{edge[1]}", name))
    return sorted(set(found))


# a -> b -> c -> d, and a -> d, a -> c: the long edges would cross b and c drawn straight
LONG_EDGES: dict[str, Any] = {
    "root": {
        "dag": {
            "tasks": {
                "a": task("comp-a"),
                "b": task("comp-b", "a"),
                "c": task("comp-c", "b", "a"),
                "d": task("comp-d", "c", "a"),
                "e": task("comp-e", "a"),
            }
        }
    },
    "components": {},
}


@pytest.mark.parametrize("spec", [SPEC, LONG_EDGES], ids=["groups", "long-edges"])
def test_no_edge_passes_through_a_task(spec: dict[str, Any]) -> None:
    graph = dag.build_graph(spec)
    assert crossings(graph) == []
    svg = dag.draw(graph, {}, {name: "#" for name in graph.nodes})
    assert svg.count('class="edge') == len(graph.edges)


def test_long_edges_are_routed_through_slots_of_their_own() -> None:
    graph = dag.build_graph(LONG_EDGES)
    assert len(graph.routes[("a", "d", False)]) == 2  # past the layers of b and c
    # drawn straight, as before, a -> d would run down through b and c
    straight = {("a", "d", False): [], ("a", "c", False): []}
    saved, graph.routes = graph.routes, {**graph.routes, **straight}
    assert crossings(graph), "the check can fail: straight long edges cross tasks"
    graph.routes = saved


def test_a_long_condition_label_is_wrapped_not_cut() -> None:
    condition = "inputs.parameter_values['pipelinechannel--compare-models-Output'] == true"
    spec = {
        "root": {
            "dag": {
                "tasks": {
                    "compare-models": task("comp-compare"),
                    "condition-1": {
                        **task("comp-condition-1", "compare-models"),
                        "taskInfo": {"name": "challenger-promoted"},
                        "triggerPolicy": {"condition": condition},
                    },
                }
            }
        },
        "components": {"comp-condition-1": {"dag": {"tasks": {"deploy": task("comp-deploy")}}}},
    }
    graph = dag.build_graph(spec)
    group = graph.groups["condition-1"]
    assert group.label == "challenger-promoted: if compare-models-Output == true"
    assert " ".join(group.lines) == group.label and len(group.lines) > 1
    svg = dag.draw(graph, {}, {name: "#" for name in graph.nodes})
    assert "…" not in svg
    _x, y, width, _ = dag.group_box(graph, group)
    assert all(len(line) * dag.CHAR_WIDTH <= width - 16 for line in group.lines)
    label_bottom = y + 14 + (len(group.lines) - 1) * dag.LABEL_LINE
    assert label_bottom < graph.nodes["deploy"].y  # the label sits above the task, not on it
    assert y > graph.nodes["compare-models"].y + dag.NODE_HEIGHT  # and below the one before


@pytest.mark.parametrize(
    "compiled",
    sorted((Path(__file__).parents[3] / "compiled").glob("*.yaml")),
    ids=lambda p: p.stem,
)
def test_built_in_pipelines_draw_with_no_edge_through_a_task(compiled: Path) -> None:
    graph = dag.build_graph(yaml.safe_load(compiled.read_text()))
    assert graph.nodes and crossings(graph) == []
    assert "…" not in dag.draw(graph, {}, {name: "#" for name in graph.nodes})
