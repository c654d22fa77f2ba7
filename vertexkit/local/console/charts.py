"""Charts drawn server-side as SVG: a confusion matrix, an ROC curve, a metric per trial.

Server-side SVG because the console loads nothing from outside the machine and runs no chart
library: these three charts are a few rectangles, lines and labels, colour given by SVG
presentation attributes (the page's Content-Security-Policy allows no inline styles).
"""

from __future__ import annotations

from collections.abc import Sequence
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


def roc_curve(points: Sequence[tuple[float, float]], size: int = 220) -> Markup:
    """False positive rate across, recall up; the diagonal is a coin toss."""
    pad = 30
    inner = size - 2 * pad

    def at(fpr: float, tpr: float) -> str:
        return f"{pad + fpr * inner:.1f},{pad + (1 - tpr) * inner:.1f}"

    ordered = sorted(points)
    line = " ".join(at(fpr, tpr) for fpr, tpr in [(0.0, 0.0), *ordered, (1.0, 1.0)])
    return svg(
        el("rect", x=pad, y=pad, width=inner, height=inner, fill="none", stroke="#dadce0"),
        el(
            "line",
            x1=pad,
            y1=pad + inner,
            x2=pad + inner,
            y2=pad,
            stroke="#dadce0",
            stroke_dasharray="4 4",
        ),
        el("polyline", points=line, fill="none", stroke="#1a73e8", stroke_width="2"),
        el("text", "false positive rate", x=size / 2, y=size - 6, text_anchor="middle"),
        el(
            "text",
            "recall",
            x=10,
            y=size / 2,
            transform=f"rotate(-90 10 {size / 2:.0f})",
            text_anchor="middle",
        ),
        width=size,
        height=size,
        label="ROC curve",
        class_="chart roc",
    )


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
