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

import itertools
import re
from dataclasses import dataclass, field
from typing import Any

from vertexkit.local.console.html import Markup, el
from vertexkit.local.console.runs import TASK_LABELS

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
    parent: str = ""  # the enclosing group, "" at the root
    lines: list[str] = field(default_factory=list)  # the label as drawn, wrapped to the box


@dataclass
class Graph:
    nodes: dict[str, Node] = field(default_factory=dict)
    groups: dict[str, Group] = field(default_factory=dict)
    edges: set[tuple[str, str, bool]] = field(default_factory=set)  # (from, to, carries data)
    # edge -> the dummy slots it passes through, and each dummy's centre x and its layer's top
    routes: dict[tuple[str, str, bool], list[str]] = field(default_factory=dict)
    dummies: dict[str, tuple[float, float]] = field(default_factory=dict)
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
            parent = groups[-1] if groups else ""
            graph.groups[name] = Group(name, group_label(name, task), len(groups), parent)
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
    name = (task.get("taskInfo") or {}).get("name") or name
    if condition:
        return f"{name}: if {condition}"
    if iterator:
        return f"{name}: for each item"
    return name


# -- layout ---------------------------------------------------------------------------------------
DUMMY_WIDTH = 12  # the slot an edge takes where it crosses a layer it does not stop in
DUMMY_GAP = 14
LABEL_LINE = 14  # a group label's line height
CHAR_WIDTH = 6.2  # an 11 px sans-serif character


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


@dataclass
class Slot:
    """One item of a layer: a task, or a dummy an edge passes through (Sugiyama's method)."""

    key: str
    width: float
    groups: tuple[str, ...]
    x: float = 0.0


def _common(a: tuple[str, ...], b: tuple[str, ...]) -> tuple[str, ...]:
    shared = []
    for left, right in zip(a, b, strict=False):
        if left != right:
            break
        shared.append(left)
    return tuple(shared)


def split_long_edges(graph: Graph, ranks: list[list[str]]) -> list[list[Slot]]:
    """Each layer's slots; an edge that spans k layers gets a dummy slot in each layer between,
    so it is routed through a gap of its own and never through a task."""
    layer = {name: i for i, rank in enumerate(ranks) for name in rank}
    slots = [[Slot(n, NODE_WIDTH, graph.nodes[n].groups) for n in rank] for rank in ranks]
    graph.routes = {}
    for source, target, data in sorted(graph.edges):
        chain = []
        groups = _common(graph.nodes[source].groups, graph.nodes[target].groups)
        for between in range(layer[source] + 1, layer[target]):
            key = f"\0{source}\0{target}\0{between}"
            slots[between].append(Slot(key, DUMMY_WIDTH, groups))
            chain.append(key)
        graph.routes[(source, target, data)] = chain
    return slots


def _neighbours(graph: Graph) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """Slot -> the slots above it and below it, along the split edges."""
    up: dict[str, list[str]] = {}
    down: dict[str, list[str]] = {}
    for (source, target, _), chain in graph.routes.items():
        path = [source, *chain, target]
        for a, b in itertools.pairwise(path):
            down.setdefault(a, []).append(b)
            up.setdefault(b, []).append(a)
    return up, down


def order_layers(graph: Graph, slots: list[list[Slot]]) -> None:
    """Barycenter passes down, up and down (fewer crossings); a group's slots stay together."""
    up, down = _neighbours(graph)
    position = {slot.key: float(i) for rank in slots for i, slot in enumerate(rank)}

    def sweep(ranks: list[list[Slot]], across: dict[str, list[str]]) -> None:
        for rank in ranks:
            for index, slot in enumerate(rank):
                linked = [position[k] for k in across.get(slot.key, []) if k in position]
                mean = sum(linked) / len(linked) if linked else float(index)
                position[slot.key] = mean
            rank.sort(key=lambda slot: (slot.groups, position[slot.key]))
            for index, slot in enumerate(rank):
                position[slot.key] = float(index)

    sweep(slots, up)
    sweep(slots[::-1], down)
    sweep(slots, up)


def _gap(a: Slot, b: Slot) -> float:
    return COLUMN_GAP if a.width == NODE_WIDTH and b.width == NODE_WIDTH else DUMMY_GAP


def place_columns(graph: Graph, slots: list[list[Slot]]) -> dict[str, float]:
    """Each slot's left x: packed in order, then pulled toward its neighbours' centres (so a
    chain is straight), never closer than its gap to the slot beside it."""
    up, down = _neighbours(graph)
    centre: dict[str, float] = {}
    for rank in slots:
        x = 0.0
        for slot in rank:
            slot.x = x
            x += slot.width + COLUMN_GAP
            centre[slot.key] = slot.x + slot.width / 2
    for _ in range(4):
        for ranks, across in ((slots, up), (slots[::-1], down)):
            for rank in ranks:
                for slot in rank:
                    linked = [centre[k] for k in across.get(slot.key, []) if k in centre]
                    if linked:
                        slot.x = sum(linked) / len(linked) - slot.width / 2
                for left, right in itertools.pairwise(rank):  # keep the order, no overlap
                    right.x = max(right.x, left.x + left.width + _gap(left, right))
                for slot in rank:
                    centre[slot.key] = slot.x + slot.width / 2
    lowest = min((slot.x for rank in slots for slot in rank), default=0.0)
    return {slot.key: slot.x - lowest + MARGIN for rank in slots for slot in rank}


def wrap(text: str, width: float, char_width: float = CHAR_WIDTH) -> list[str]:
    """A label in lines that fit `width` (split at spaces; a long word is cut into pieces)."""
    limit = max(int(width / char_width), 8)
    lines: list[str] = []
    for word in text.split(" "):
        while len(word) > limit:
            lines.append(word[:limit])
            word = word[limit:]
        if lines and len(lines[-1]) + 1 + len(word) <= limit:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return lines


def _children(graph: Graph, group: Group) -> list[Group]:
    return [g for g in graph.groups.values() if g.parent == group.name]


def group_extent(graph: Graph, group: Group) -> tuple[float, float] | None:
    """A group's left and right: its tasks and inner groups, padded; None when empty."""
    edges: list[float] = []
    for node in graph.nodes.values():
        if node.groups and node.groups[-1] == group.name:
            edges += [node.x, node.x + NODE_WIDTH]
    for child in _children(graph, group):
        inner = group_extent(graph, child)
        if inner:
            edges += list(inner)
    if not edges:
        return None
    return min(edges) - GROUP_PAD, max(edges) + GROUP_PAD


def _top_layer(graph: Graph, group: Group, layer: dict[str, int]) -> int:
    return min(layer[n.name] for n in graph.nodes.values() if group.name in n.groups)


def head_room(graph: Graph, group: Group, layer: dict[str, int]) -> float:
    """How far above its first layer's tasks a group's box starts: its label's lines and its
    padding, above those of the inner groups that start in the same layer."""
    top = _top_layer(graph, group, layer)
    inner = [
        head_room(graph, child, layer)
        for child in _children(graph, group)
        if group_extent(graph, child) and _top_layer(graph, child, layer) == top
    ]
    return GROUP_PAD + len(group.lines) * LABEL_LINE + 4 + max(inner, default=0.0)


def foot_room(graph: Graph, group: Group, layer: dict[str, int]) -> float:
    bottom = max(layer[n.name] for n in graph.nodes.values() if group.name in n.groups)
    inner = [
        foot_room(graph, child, layer)
        for child in _children(graph, group)
        if group_extent(graph, child)
        and max(layer[n.name] for n in graph.nodes.values() if child.name in n.groups) == bottom
    ]
    return GROUP_PAD + max(inner, default=0.0)


def layout(graph: Graph) -> None:
    ranks = layers(graph)
    slots = split_long_edges(graph, ranks)
    order_layers(graph, slots)
    lefts = place_columns(graph, slots)
    for name, node in graph.nodes.items():
        node.x = lefts[name]
    layer = {name: i for i, rank in enumerate(ranks) for name in rank}
    used = [g for g in graph.groups.values() if group_extent(graph, g)]
    for group in used:
        left, right = group_extent(graph, group) or (0.0, 0.0)
        group.lines = wrap(group.label, right - left - 16)
    above = [0.0] * len(ranks)
    below = [0.0] * len(ranks)
    for group in used:
        top = _top_layer(graph, group, layer)
        above[top] = max(above[top], head_room(graph, group, layer))
        bottom = max(layer[n.name] for n in graph.nodes.values() if group.name in n.groups)
        below[bottom] = max(below[bottom], foot_room(graph, group, layer))
    y = MARGIN + above[0] if ranks else MARGIN
    tops = []
    for row in range(len(ranks)):
        if row:
            y += max(LAYER_GAP, below[row - 1] + above[row] + 28)
        tops.append(y)
        y += NODE_HEIGHT
    for name, node in graph.nodes.items():
        node.y = tops[layer[name]]
    graph.dummies = {
        slot.key: (lefts[slot.key] + DUMMY_WIDTH / 2, tops[row])
        for row, rank in enumerate(slots)
        for slot in rank
        if slot.width == DUMMY_WIDTH
    }
    right_edge = max((lefts[s.key] + s.width for rank in slots for s in rank), default=0.0)
    for group in used:
        right_edge = max(right_edge, (group_extent(graph, group) or (0.0, 0.0))[1])
    graph.width = right_edge + MARGIN
    graph.height = y + (below[-1] if ranks else 0.0) + MARGIN


def group_box(graph: Graph, group: Group) -> tuple[float, float, float, float]:
    ranks = layers(graph)
    layer = {name: i for i, rank in enumerate(ranks) for name in rank}
    left, right = group_extent(graph, group) or (0.0, 0.0)
    members = [node for node in graph.nodes.values() if group.name in node.groups]
    top = min(node.y for node in members) - head_room(graph, group, layer)
    bottom = max(node.y for node in members) + NODE_HEIGHT + foot_room(graph, group, layer)
    return left, top, right - left, bottom - top


# -- drawing --------------------------------------------------------------------------------------
def route(graph: Graph, edge: tuple[str, str, bool]) -> list[tuple[float, float]]:
    """The points an edge passes: its source's bottom, each dummy slot's top and bottom (a
    straight drop through the layer), its target's top."""
    source, target = graph.nodes[edge[0]], graph.nodes[edge[1]]
    points = [(source.x + NODE_WIDTH / 2, source.y + NODE_HEIGHT)]
    for key in graph.routes.get(edge, []):
        x, y = graph.dummies[key]
        points += [(x, y), (x, y + NODE_HEIGHT)]
    points.append((target.x + NODE_WIDTH / 2, target.y))
    return points


def edge_path(points: list[tuple[float, float]]) -> str:
    """Curves across the gaps between layers, straight lines down the dummy slots."""
    (x0, y0), rest = points[0], points[1:]
    path = [f"M{x0:.0f},{y0:.0f}"]
    for index, (x, y) in enumerate(rest):
        px, py = points[index]
        if index % 2 == 0:  # a gap between layers
            middle = (py + y) / 2
            path.append(f"C{px:.0f},{middle:.0f} {x:.0f},{middle:.0f} {x:.0f},{y:.0f}")
        else:  # down through a layer, in the edge's own slot
            path.append(f"L{x:.0f},{y:.0f}")
    return " ".join(path)


def draw_edges(graph: Graph) -> list[Markup]:
    return [
        el(
            "path",
            d=edge_path(route(graph, (source, target, data))),
            class_="edge" if data else "edge order",
            marker_end="url(#arrow)",
            data_edge=f"{source}->{target}",
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
        if not group_extent(graph, group):
            continue  # an empty group has nothing to enclose
        x, y, width, height = group_box(graph, group)
        drawn.append(
            el(
                "g",
                el(
                    "rect", x=f"{x:.0f}", y=f"{y:.0f}", width=f"{width:.0f}", height=f"{height:.0f}"
                ),
                [
                    el("text", line, x=f"{x + 8:.0f}", y=f"{y + 14 + i * LABEL_LINE:.0f}")
                    for i, line in enumerate(group.lines or [group.label])
                ],
                el("title", group.label),
                class_="group",
                data_group=group.name,
            )
        )
    return drawn


def draw_node(node: Node, state: str, href: str, selected: bool) -> Markup:
    label = TASK_LABELS.get(state, state)
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
            el("text", label, x=f"{node.x + 12:.0f}", y=f"{node.y + 36:.0f}", class_="state"),
            class_=f"task state-{state}" + (" selected" if selected else ""),
            data_task=node.name,
            data_state=state,
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
