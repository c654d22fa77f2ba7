"""Charts drawn server-side as SVG: a confusion matrix, an ROC curve, a metric per trial, and
retraining decisions over time.

Server-side SVG because the console loads nothing from outside the machine and runs no chart
library: these three charts are a few rectangles, lines and labels, colour given by SVG
presentation attributes (the page's Content-Security-Policy allows no inline styles).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from vertexkit.local.console.html import Markup, el

CELL = 46
CHAR_WIDTH = 6.2  # an 11 px sans-serif character, for label space


def svg(*children: Any, width: float, height: float, label: str, class_: str) -> Markup:
    return el(
        "svg",
        *children,
        xmlns="http://www.w3.org/2000/svg",
        width=f"{width:.0f}",
        height=f"{height:.0f}",
        viewBox=f"0 0 {width:.0f} {height:.0f}",
        role="img",
        aria_label=label,
        class_=class_,
    )


def shorten(text: str, limit: int = 30) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def confusion_matrix(labels: Sequence[str], rows: Sequence[Sequence[float]]) -> Markup:
    """Rows are the true class, columns the predicted one; darker is more."""
    shown = [shorten(label) for label in labels]
    space = min(CHAR_WIDTH * max((len(label) for label in shown), default=4) + 16, 220)
    largest = max((value for row in rows for value in row), default=0) or 1
    cells = [
        matrix_cell(i, j, value, largest, labels, space)
        for i, row in enumerate(rows)
        for j, value in enumerate(row)
    ]
    names = []
    for k, name in enumerate(shown):
        middle = space + k * CELL + CELL / 2
        names.append(el("text", name, x=space - 6, y=middle + 4, text_anchor="end"))
        names.append(
            el(
                "text",
                name,
                x=middle,
                y=space - 8,
                text_anchor="start",
                transform=f"rotate(-45 {middle:.0f} {space - 8:.0f})",
            )
        )
    width = space + len(labels) * CELL + space * 0.75  # rotated column labels lean right
    height = space + len(labels) * CELL + 24
    legend = el("text", "rows: true class · columns: predicted", x=4, y=height - 6, class_="axis")
    return svg(
        names,
        cells,
        legend,
        width=width,
        height=height,
        label="confusion matrix",
        class_="chart confusion-matrix",
    )


def matrix_cell(
    i: int, j: int, value: float, largest: float, labels: Sequence[str], space: float
) -> Markup:
    x, y = space + j * CELL, space + i * CELL
    shade = 0.08 + 0.85 * value / largest
    return el(
        "g",
        el("rect", x=x, y=y, width=CELL, height=CELL, fill="#1a73e8", fill_opacity=f"{shade:.2f}"),
        el(
            "text",
            f"{value:g}",
            x=x + CELL / 2,
            y=y + CELL / 2 + 5,
            text_anchor="middle",
            fill="#fff" if shade > 0.5 else "#202124",
        ),
        el(
            "title",
            f"true {labels[i] if i < len(labels) else i}, "
            f"predicted {labels[j] if j < len(labels) else j}: {value:g}",
        ),
        class_="cell",
        data_true=labels[i] if i < len(labels) else "",
        data_predicted=labels[j] if j < len(labels) else "",
    )


def roc_auc(points: Sequence[tuple[float, float]]) -> float:
    """The area under the ROC curve: trapezoids over the points from (0, 0) to (1, 1), as
    `sklearn.metrics.auc` integrates the curve `roc_curve` gives."""
    ordered = [(0.0, 0.0), *sorted(points), (1.0, 1.0)]
    return sum((x2 - x1) * (y1 + y2) / 2 for (x1, y1), (x2, y2) in itertools.pairwise(ordered))


TICKS = (0.0, 0.25, 0.5, 0.75, 1.0)


def roc_curve(points: Sequence[tuple[float, float]], size: int = 280) -> Markup:
    """False positive rate across, true positive rate (recall) up, ticks every 0.25, the AUC
    in the corner; the dashed diagonal is a coin toss."""
    left, top, right, bottom = 46, 28, 14, 40
    inner_w, inner_h = size - left - right, size - top - bottom

    def x_of(fpr: float) -> float:
        return left + fpr * inner_w

    def y_of(tpr: float) -> float:
        return top + (1 - tpr) * inner_h

    ordered = sorted(points)
    line = " ".join(
        f"{x_of(fpr):.1f},{y_of(tpr):.1f}" for fpr, tpr in [(0.0, 0.0), *ordered, (1.0, 1.0)]
    )
    auc = roc_auc(points)
    ticks = []
    for tick in TICKS:
        x, y = x_of(tick), y_of(tick)
        ticks += [
            el("line", x1=f"{x:.1f}", y1=top + inner_h, x2=f"{x:.1f}", y2=top + inner_h + 4,
               stroke="#5f6368"),
            el("text", f"{tick:g}", x=f"{x:.1f}", y=top + inner_h + 15, text_anchor="middle",
               class_="tick x-tick"),
            el("line", x1=left - 4, y1=f"{y:.1f}", x2=left, y2=f"{y:.1f}", stroke="#5f6368"),
            el("text", f"{tick:g}", x=left - 7, y=f"{y + 4:.1f}", text_anchor="end",
               class_="tick y-tick"),
        ]  # fmt: skip
    return svg(
        el("rect", x=left, y=top, width=inner_w, height=inner_h, fill="none", stroke="#dadce0"),
        el("line", x1=left, y1=top + inner_h, x2=left + inner_w, y2=top + inner_h,
           stroke="#5f6368", class_="axis-line"),
        el("line", x1=left, y1=top, x2=left, y2=top + inner_h, stroke="#5f6368",
           class_="axis-line"),
        el("line", x1=left, y1=top + inner_h, x2=left + inner_w, y2=top, stroke="#dadce0",
           stroke_dasharray="4 4"),
        ticks,
        el("polyline", points=line, fill="none", stroke="#1a73e8", stroke_width="2"),
        el("text", f"AUC = {auc:.4f}", x=left + inner_w - 4, y=top + inner_h - 8,
           text_anchor="end", class_="auc", data_auc=f"{auc:.6f}"),
        el("text", "ROC curve", x=left, y=16, class_="title"),
        el("text", "false positive rate", x=left + inner_w / 2, y=size - 6,
           text_anchor="middle"),
        el("text", "true positive rate", x=12, y=top + inner_h / 2,
           transform=f"rotate(-90 12 {top + inner_h / 2:.0f})", text_anchor="middle"),
        width=size,
        height=size,
        label=f"ROC curve, AUC {auc:.4f}",
        class_="chart roc",
    )  # fmt: skip


def trial_chart(values: Sequence[tuple[str, float]], best: str | None, width: int = 520) -> Markup:
    """One bar per trial (its final metric), in trial order; the best trial's bar is marked."""
    height, pad = 200, 34
    if not values:
        return svg(
            el("text", "no finished trials", x=10, y=20),
            width=width,
            height=40,
            label="trials",
            class_="chart trials",
        )
    low = min(0.0, *(v for _, v in values))
    high = max(*(v for _, v in values), low + 1e-9)
    slot = (width - 2 * pad) / len(values)
    bars = []
    for index, (trial, value) in enumerate(values):
        top = pad + (high - value) / (high - low) * (height - 2 * pad)
        zero = pad + high / (high - low) * (height - 2 * pad)
        x = pad + index * slot + slot * 0.15
        is_best = trial == best
        bars.append(
            el(
                "g",
                el(
                    "rect",
                    x=f"{x:.1f}",
                    y=f"{min(top, zero):.1f}",
                    width=f"{slot * 0.7:.1f}",
                    height=f"{max(abs(zero - top), 1):.1f}",
                    fill="#188038" if is_best else "#1a73e8",
                ),
                el(
                    "text",
                    trial + (" ★" if is_best else ""),
                    x=f"{x + slot * 0.35:.1f}",
                    y=height - 10,
                    text_anchor="middle",
                ),
                el("title", f"trial {trial}: {value:g}"),
                class_="bar best" if is_best else "bar",
                data_trial=trial,
            )
        )
    scale = [
        el("text", f"{high:.4g}", x=2, y=pad + 4),
        el("text", f"{low:.4g}", x=2, y=height - pad + 4),
    ]
    return svg(
        scale, bars, width=width, height=height, label="metric per trial", class_="chart trials"
    )


def classification_parts(metadata: dict[str, Any]) -> tuple[list[str], list[list[float]]]:
    """KFP's ClassificationMetrics metadata -> (class labels, confusion matrix rows)."""
    matrix = metadata.get("confusionMatrix") or {}
    labels = [spec.get("displayName", "") for spec in matrix.get("annotationSpecs") or []]
    # KFP writes each row as {"row": [...]}; Vertex's ModelEvaluation as a plain list.
    rows = [
        list(row.get("row") or []) if isinstance(row, dict) else list(row)
        for row in matrix.get("rows") or []
    ]
    return labels, rows


def roc_points(metadata: dict[str, Any]) -> list[tuple[float, float]]:
    return [
        (float(point.get("falsePositiveRate", 0)), float(point.get("recall", 0)))
        for point in metadata.get("confidenceMetrics") or []
    ]


@dataclass(frozen=True)
class Decision:
    """One retraining decision as the chart draws it."""

    at: datetime
    champion: float | None
    challenger: float | None
    promoted: bool
    label: str = ""  # the hover text


def decisions_chart(decisions: Sequence[Decision], width: int = 640, height: int = 240) -> Markup:
    """Champion (grey, dashed) and challenger (blue) metric over time; a challenger's point is
    green when it was promoted, a red ring when it was not."""
    values = [v for d in decisions for v in (d.champion, d.challenger) if v is not None]
    if not decisions or not values:
        return svg(
            el("text", "no decisions with a metric", x=10, y=20),
            width=width,
            height=40,
            label="retraining decisions",
            class_="chart decisions",
        )
    frame = PlotFrame(decisions, values, width, height)
    return svg(
        frame.axes(),
        frame.line([(d.at, d.champion) for d in decisions], "#9aa0a6", dashed=True),
        frame.line([(d.at, d.challenger) for d in decisions], "#1a73e8"),
        [frame.champion_point(d) for d in decisions if d.champion is not None],
        [frame.challenger_point(d) for d in decisions if d.challenger is not None],
        frame.legend(),
        width=width,
        height=height,
        label="champion vs challenger metric over time",
        class_="chart decisions",
    )


class PlotFrame:
    """Maps (time, value) to the chart's pixels: time across, the metric up."""

    left, right, top, bottom = 52, 16, 28, 34

    def __init__(
        self, decisions: Sequence[Decision], values: list[float], width: int, height: int
    ) -> None:
        self.width, self.height = width, height
        self.start = min(d.at for d in decisions)
        self.span = max((max(d.at for d in decisions) - self.start).total_seconds(), 0.0)
        spread = max(values) - min(values)
        margin = spread * 0.1 if spread else max(abs(max(values)) * 0.05, 0.05)
        self.low, self.high = min(values) - margin, max(values) + margin

    def x(self, at: datetime) -> float:
        inner = self.width - self.left - self.right
        if not self.span:
            return self.left + inner / 2
        return self.left + (at - self.start).total_seconds() / self.span * inner

    def y(self, value: float) -> float:
        inner = self.height - self.top - self.bottom
        return self.top + (self.high - value) / (self.high - self.low) * inner

    def line(
        self, points: list[tuple[datetime, float | None]], colour: str, dashed: bool = False
    ) -> Markup:
        shown = " ".join(f"{self.x(at):.1f},{self.y(v):.1f}" for at, v in points if v is not None)
        return el(
            "polyline",
            points=shown,
            fill="none",
            stroke=colour,
            stroke_width="2",
            stroke_dasharray="5 4" if dashed else None,
        )

    def champion_point(self, d: Decision) -> Markup:
        return el(
            "circle",
            el("title", f"champion {d.champion:g} · {d.label}"),
            cx=f"{self.x(d.at):.1f}",
            cy=f"{self.y(d.champion or 0):.1f}",
            r="3",
            fill="#9aa0a6",
            class_="champion",
        )

    def challenger_point(self, d: Decision) -> Markup:
        verdict = "promoted" if d.promoted else "not promoted"
        return el(
            "circle",
            el("title", f"challenger {d.challenger:g}, {verdict} · {d.label}"),
            cx=f"{self.x(d.at):.1f}",
            cy=f"{self.y(d.challenger or 0):.1f}",
            r="5",
            fill="#188038" if d.promoted else "#fff",
            stroke="#188038" if d.promoted else "#d93025",
            stroke_width="2",
            class_="challenger promoted" if d.promoted else "challenger kept-champion",
        )

    def axes(self) -> list[Markup]:
        bottom = self.height - self.bottom
        end = self.start + timedelta(seconds=self.span)
        return [
            el(
                "line",
                x1=self.left,
                y1=bottom,
                x2=self.width - self.right,
                y2=bottom,
                stroke="#dadce0",
            ),
            el("line", x1=self.left, y1=self.top, x2=self.left, y2=bottom, stroke="#dadce0"),
            el("text", f"{self.high:.4g}", x=4, y=self.top + 4),
            el("text", f"{self.low:.4g}", x=4, y=bottom),
            el("text", self.start.strftime("%Y-%m-%d %H:%M"), x=self.left, y=self.height - 12),
            el(
                "text",
                end.strftime("%Y-%m-%d %H:%M"),
                x=self.width - self.right,
                y=self.height - 12,
                text_anchor="end",
            ),
        ]

    def legend(self) -> Markup:
        return el(
            "text",
            "grey dashed: champion · blue: challenger (filled green: promoted, red ring: not)",
            x=self.left,
            y=14,
            class_="axis",
        )
