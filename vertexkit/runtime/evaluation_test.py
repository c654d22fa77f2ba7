"""The ROC curve a classification evaluation hands the Model Registry (Vertex's field names)."""

from __future__ import annotations

from vertexkit.runtime.evaluation import confidence_metrics


def test_confidence_metrics_use_vertex_names_and_keep_both_ends_when_thinned() -> None:
    count = 1001
    roc = {
        "fpr": [i / (count - 1) for i in range(count)],
        "tpr": [min(1.0, 2 * i / (count - 1)) for i in range(count)],
        "thresholds": [1 - i / (count - 1) for i in range(count)],
    }
    points = confidence_metrics(roc, most=100)
    assert len(points) <= 101
    assert points[0] == {"confidenceThreshold": 1.0, "recall": 0.0, "falsePositiveRate": 0.0}
    assert points[-1] == {"confidenceThreshold": 0.0, "recall": 1.0, "falsePositiveRate": 1.0}
    assert [p["falsePositiveRate"] for p in points] == sorted(
        p["falsePositiveRate"] for p in points
    )
