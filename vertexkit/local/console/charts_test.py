"""Server-side SVG charts: one cell per confusion-matrix entry, the best trial marked."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

from vertexkit.local.console import charts


def test_confusion_matrix_has_a_cell_per_entry_and_escaped_labels() -> None:
    svg = charts.confusion_matrix(["<i>a</i>", "b"], [[5, 1], [0, 7]])
    assert svg.count('class="cell"') == 4
    assert "<i>" not in svg and "&lt;i&gt;a&lt;/i&gt;" in svg
    assert all(f">{value}<" in svg for value in (5, 1, 0, 7))
    assert 'data-true="b" data-predicted="b"' in svg


def test_classification_parts_read_kfp_metadata() -> None:
    metadata = {
        "confusionMatrix": {
            "annotationSpecs": [{"displayName": "x"}, {"displayName": "y"}],
            "rows": [{"row": [1, 2]}, {"row": [3, 4]}],
        },
        "confidenceMetrics": [{"falsePositiveRate": 0.1, "recall": 0.9}],
    }
    assert charts.classification_parts(metadata) == (["x", "y"], [[1, 2], [3, 4]])
    assert charts.roc_points(metadata) == [(0.1, 0.9)]


def test_trial_chart_marks_the_best_trial_only() -> None:
    svg = charts.trial_chart([("1", 0.2), ("2", 0.9), ("3", 0.5)], best="2")
    assert svg.count('class="bar best"') == 1
    assert 'data-trial="2"' in svg and "2 ★" in svg


def test_trial_chart_without_trials_says_so() -> None:
    assert "no finished trials" in charts.trial_chart([], best=None)


def test_decisions_chart_marks_promoted_challengers_and_orders_by_time() -> None:
    start = datetime(2026, 1, 1, tzinfo=timezone.utc)
    decisions = [
        charts.Decision(start, None, 0.8, True, "<b>first</b>"),  # no champion yet
        charts.Decision(start + timedelta(days=1), 0.8, 0.75, False),
        charts.Decision(start + timedelta(days=2), 0.8, 0.9, True),
    ]
    svg = charts.decisions_chart(decisions)
    assert svg.count('class="challenger promoted"') == 2
    assert svg.count('class="challenger kept-champion"') == 1
    assert svg.count('class="champion"') == 2
    assert "&lt;b&gt;first" in svg and "<b>first" not in svg
    challenger_x = re.findall(r'<circle cx="([0-9.]+)"[^>]*class="challenger', svg)
    assert [float(x) for x in challenger_x] == sorted(float(x) for x in challenger_x)
    assert "2026-01-01 00:00" in svg and "2026-01-03 00:00" in svg


def test_decisions_chart_without_metrics_says_so() -> None:
    svg = charts.decisions_chart([charts.Decision(datetime.now(timezone.utc), None, None, False)])
    assert "no decisions with a metric" in svg


def test_roc_curve_has_ticks_on_both_axes_and_the_auc_sklearn_computes() -> None:
    import numpy as np
    from sklearn.metrics import roc_auc_score
    from sklearn.metrics import roc_curve as sk_roc_curve

    rng = np.random.default_rng(7)
    labels = rng.integers(0, 2, 200)
    scores = np.round(labels * 0.3 + rng.random(200), 1)  # ties: the curve has diagonal steps
    fpr, tpr, _ = sk_roc_curve(labels, scores)
    svg = charts.roc_curve(list(zip(fpr.tolist(), tpr.tolist(), strict=True)))
    expected = roc_auc_score(labels, scores)
    shown = float(re.search(r'data-auc="([0-9.]+)"', svg).group(1))
    assert abs(shown - expected) < 1e-6 and 0.6 < expected < 0.95
    assert f"AUC = {expected:.4f}" in svg
    assert svg.count('class="tick x-tick"') == 5 and svg.count('class="tick y-tick"') == 5
    assert ">0.5<" in svg and "false positive rate" in svg and "true positive rate" in svg
