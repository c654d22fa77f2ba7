"""The run's graph from its compiled pipeline spec, laid out in layers and drawn as SVG.

Why a layout written here rather than a graph library: the console fetches nothing from outside
the machine, and a pipeline graph is small (tens of tasks, mostly a chain), so a longest-path
layering with one barycenter ordering pass (the first steps of Sugiyama's method) gives the
picture Vertex draws, server-side, with no JavaScript library to vendor.

Leaf tasks are nodes; a `dsl.If`/`dsl.Condition` or `dsl.ParallelFor` sub-DAG is a group drawn as
a box around its tasks. A task inside a group depends on what the group depends on. Edges carry
data (an artifact or parameter the consumer reads) or, dashed, order only (`.after()`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from vertexkit.local.console.html import Markup, el

NODE_WIDTH = 220
NODE_HEIGHT = 46
LAYER_GAP = 64
COLUMN_GAP = 36
MARGIN = 28
GROUP_PAD = 12


@dataclass
class Node:
    name: str
    groups: tuple[str, ...]  # enclosing groups, outermost first
    x: float = 0.0
    y: float = 0.0


@dataclass
class Group:
    name: str
    label: str
    depth: int


@dataclass
class Graph:
    nodes: dict[str, Node] = field(default_factory=dict)
    groups: dict[str, Group] = field(default_factory=dict)
    edges: set[tuple[str, str, bool]] = field(default_factory=set)  # (from, to, carries data)
    width: float = 0.0
    height: float = 0.0


def build_graph(spec: dict[str, Any]) -> Graph:
    """The leaf tasks, groups and edges of a compiled pipeline spec (`pipelineSpec`)."""
    graph = Graph()
    components = spec.get("components") or {}
    _add_dag(graph, (spec.get("root") or {}).get("dag") or {}, components, (), {})
    layout(graph)
    return graph


def _component_dag(task: dict[str, Any], components: dict[str, Any]) -> dict[str, Any] | None:
    ref = (task.get("componentRef") or {}).get("name", "")
    return (components.get(ref) or {}).get("dag")


def _leaves(graph: Graph, prefix: tuple[str, ...], name: str) -> list[str]:
    """The leaf tasks a sibling `name` stands for: itself, or every task in its group."""
    if name in graph.nodes:
        return [name]
    return [n.name for n in graph.nodes.values() if name in n.groups[len(prefix) :]]


def _dependencies(task: dict[str, Any]) -> dict[str, bool]:
    """Sibling task -> whether this task reads data from it (else order only)."""
    found: dict[str, bool] = {name: False for name in task.get("dependentTasks") or []}
    inputs = task.get("inputs") or {}
    for kind, key in (("artifacts", "taskOutputArtifact"), ("parameters", "taskOutputParameter")):
        for spec in (inputs.get(kind) or {}).values():
            producer = (spec.get(key) or {}).get("producerTask")
            if producer:
                found[producer] = True
    return found


def _add_dag(
    graph: Graph,
    dag: dict[str, Any],
    components: dict[str, Any],
    groups: tuple[str, ...],
    inherited: dict[str, bool],
) -> None:
    tasks = dag.get("tasks") or {}
    for name, task in _in_dependency_order(tasks):
        deps = {**inherited}
        for producer, carries in _dependencies(task).items():
            for leaf in _leaves(graph, groups, producer):
                deps[leaf] = deps.get(leaf, False) or carries
        sub_dag = _component_dag(task, components)
        if sub_dag is None:
            graph.nodes[name] = Node(name, groups)
            graph.edges.update((leaf, name, carries) for leaf, carries in deps.items())
        else:
            graph.groups[name] = Group(name, group_label(name, task), len(groups))
            _add_dag(graph, sub_dag, components, (*groups, name), deps)


def _in_dependency_order(tasks: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Producers before consumers, so a consumer can resolve a group producer to its leaves."""
    ordered: list[str] = []
    pending = dict(tasks)
    while pending:
        ready = [
            name
            for name, task in pending.items()
            if all(dep not in pending for dep in _dependencies(task))
        ] or [next(iter(pending))]  # a cycle cannot be compiled; never loop on one anyway
        for name in sorted(ready):
            ordered.append(name)
            pending.pop(name)
    return [(name, tasks[name]) for name in ordered]


CHANNEL = re.compile(r"inputs\.parameter_values\['pipelinechannel--([^']+)'\]")


def group_label(name: str, task: dict[str, Any]) -> str:
    """`condition-1: if int(add-Output) > 1` from the compiled trigger condition."""
    condition = CHANNEL.sub(r"\1", (task.get("triggerPolicy") or {}).get("condition") or "")
    iterator = task.get("parameterIterator") or task.get("artifactIterator")
    if condition:
        return f"{name}: if {condition}"
    if iterator:
        return f"{name}: for each item"
    return name


# -- layout ---------------------------------------------------------------------------------------
def layers(graph: Graph) -> list[list[str]]:
    """Longest-path layering: a task sits one layer below its lowest producer."""
    depth: dict[str, int] = {}
    incoming: dict[str, list[str]] = {name: [] for name in graph.nodes}
    for source, target, _ in graph.edges:
        incoming[target].append(source)

    def layer_of(name: str, seen: frozenset[str] = frozenset()) -> int:
        if name not in depth:
            parents = [p for p in incoming[name] if p not in seen]
            depth[name] = 1 + max((layer_of(p, seen | {name}) for p in parents), default=-1)
        return depth[name]

    for name in graph.nodes:
        layer_of(name)
    result: list[list[str]] = [[] for _ in range(max(depth.values(), default=-1) + 1)]
    for name in graph.nodes:  # spec order: stable and readable
        result[depth[name]].append(name)
    return result


def order_by_barycenter(graph: Graph, ranks: list[list[str]]) -> None:
    """One downward pass: a task goes under the mean position of its producers (fewer
    crossings); tasks of the same group stay together."""
    position: dict[str, float] = {}
    for rank in ranks:
        for index, name in enumerate(rank):
            parents = [position[s] for s, t, _ in graph.edges if t == name and s in position]
            mean = sum(parents) / len(parents) if parents else float(index)
            position[name] = mean
        rank.sort(key=lambda name: (graph.nodes[name].groups, position[name]))
        for index, name in enumerate(rank):
            position[name] = float(index)


def layout(graph: Graph) -> None:
    ranks = layers(graph)
    order_by_barycenter(graph, ranks)
    widest = max((len(rank) for rank in ranks), default=1)
    full_width = widest * NODE_WIDTH + (widest - 1) * COLUMN_GAP
    for row, rank in enumerate(ranks):
        row_width = len(rank) * NODE_WIDTH + (len(rank) - 1) * COLUMN_GAP
        left = MARGIN + (full_width - row_width) / 2
        for column, name in enumerate(rank):
            node = graph.nodes[name]
            node.x = left + column * (NODE_WIDTH + COLUMN_GAP)
            node.y = MARGIN + row * (NODE_HEIGHT + LAYER_GAP)
    graph.width = full_width + 2 * MARGIN
    graph.height = MARGIN * 2 + len(ranks) * NODE_HEIGHT + max(len(ranks) - 1, 0) * LAYER_GAP


def group_box(graph: Graph, group: Group) -> tuple[float, float, float, float]:
    members = [node for node in graph.nodes.values() if group.name in node.groups]
    pad = GROUP_PAD * (1 + max((len(n.groups) for n in members), default=1) - group.depth - 1)
    left = min(node.x for node in members) - pad
    top = min(node.y for node in members) - pad - 14
    right = max(node.x for node in members) + NODE_WIDTH + pad
    bottom = max(node.y for node in members) + NODE_HEIGHT + pad
    return left, top, right - left, bottom - top


# -- drawing --------------------------------------------------------------------------------------
def edge_path(source: Node, target: Node) -> str:
    x1, y1 = source.x + NODE_WIDTH / 2, source.y + NODE_HEIGHT
    x2, y2 = target.x + NODE_WIDTH / 2, target.y
    middle = (y1 + y2) / 2
    return f"M{x1:.0f},{y1:.0f} C{x1:.0f},{middle:.0f} {x2:.0f},{middle:.0f} {x2:.0f},{y2:.0f}"


def draw_edges(graph: Graph) -> list[Markup]:
    return [
        el(
            "path",
            d=edge_path(graph.nodes[source], graph.nodes[target]),
            class_="edge" if data else "edge order",
            marker_end="url(#arrow)",
        )
        for source, target, data in sorted(graph.edges)
    ]


def fit(text: str, width: float, char_width: float = 6.0) -> str:
    """Cuts a label to the box it sits in (an 11 px character is about 6 px wide)."""
    limit = max(int(width / char_width), 4)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def draw_groups(graph: Graph) -> list[Markup]:
    drawn = []
    for group in sorted(graph.groups.values(), key=lambda g: g.depth):
        if not any(group.name in node.groups for node in graph.nodes.values()):
            continue  # an empty group has nothing to enclose
        x, y, width, height = group_box(graph, group)
        drawn.append(
            el(
                "g",
                el(
                    "rect", x=f"{x:.0f}", y=f"{y:.0f}", width=f"{width:.0f}", height=f"{height:.0f}"
                ),
                el("text", fit(group.label, width - 16), x=f"{x + 8:.0f}", y=f"{y + 14:.0f}"),
                el("title", group.label),
                class_="group",
            )
        )
    return drawn


def draw_node(node: Node, state: str, href: str, selected: bool) -> Markup:
    return el(
        "a",
        el(
            "g",
            el("rect", x=f"{node.x:.0f}", y=f"{node.y:.0f}", width=NODE_WIDTH, height=NODE_HEIGHT),
            el("title", node.name),
            el(
                "text",
                fit(node.name, NODE_WIDTH - 24, 7.0),
                x=f"{node.x + 12:.0f}",
                y=f"{node.y + 19:.0f}",
                class_="name",
            ),
            el("text", state, x=f"{node.x + 12:.0f}", y=f"{node.y + 36:.0f}", class_="state"),
            class_=f"task state-{state}" + (" selected" if selected else ""),
            data_task=node.name,
        ),
        href=href,
    )


def draw(graph: Graph, states: dict[str, str], href: dict[str, str], selected: str = "") -> Markup:
    """The SVG: groups under edges under nodes; each node's class says its state."""
    arrow = el(
        "defs",
        el(
            "marker",
            el("path", d="M0,0 L8,4 L0,8 z"),
            id="arrow",
            viewBox="0 0 8 8",
            refX="8",
            refY="4",
            markerWidth="8",
            markerHeight="8",
            orient="auto",
        ),
    )
    nodes = [
        draw_node(node, states.get(name, "PENDING"), href[name], name == selected)
        for name, node in graph.nodes.items()
    ]
    return el(
        "svg",
        arrow,
        draw_groups(graph),
        draw_edges(graph),
        nodes,
        xmlns="http://www.w3.org/2000/svg",
        class_="dag",
        width=f"{graph.width:.0f}",
        height=f"{graph.height:.0f}",
        viewBox=f"0 0 {graph.width:.0f} {graph.height:.0f}",
        role="img",
        aria_label="pipeline graph",
    )
