from __future__ import annotations

import json
from pathlib import Path

import pytest

from vertexkit.runtime import gcp_resources as gr


def test_vertex_uri_round_trips_to_the_resource_name() -> None:
    name = "projects/p/locations/europe-west4/customJobs/123"
    uri = gr.vertex_resource_uri("europe-west4", name)
    assert uri == f"https://europe-west4-aiplatform.googleapis.com/v1/{name}"
    assert gr.vertex_name_from_uri(uri) == name


def test_bigquery_uri_round_trips() -> None:
    uri = gr.bigquery_job_uri("p", "job_1", "US")
    assert uri == "https://www.googleapis.com/bigquery/v2/projects/p/jobs/job_1?location=US"
    assert gr.bigquery_job_from_uri(uri) == gr.BigQueryJobRef("p", "job_1", "US")


def test_written_file_is_gcpc_json_and_reads_back(tmp_path: Path) -> None:
    path = tmp_path / "out" / "gcp_resources"
    gr.record_vertex_resource(
        path, "CustomJob", "us-central1", "projects/p/locations/l/customJobs/1"
    )
    gr.record_vertex_resource(path, "VertexLro", "us-central1", "projects/p/locations/l/ops/2")
    gr.record_vertex_resource(
        path, "CustomJob", "us-central1", "projects/p/locations/l/customJobs/3"
    )
    body = json.loads(path.read_text())
    assert [r["resourceType"] for r in body["resources"]] == ["VertexLro", "CustomJob"]
    assert gr.find_vertex_resource(path, "CustomJob") == "projects/p/locations/l/customJobs/3"
    assert gr.find_vertex_resource(path, "BigQueryJob") is None


def test_missing_or_empty_file_means_nothing_to_resume(tmp_path: Path) -> None:
    assert gr.read_gcp_resources(tmp_path / "absent") == []
    (tmp_path / "empty").write_text("")
    assert gr.read_gcp_resources(tmp_path / "empty") == []
    assert gr.read_gcp_resources(None) == []


def test_garbage_is_refused(tmp_path: Path) -> None:
    (tmp_path / "bad").write_text("{not json")
    with pytest.raises(ValueError, match="not GcpResources JSON"):
        gr.read_gcp_resources(tmp_path / "bad")
    with pytest.raises(ValueError, match="not a Vertex AI resource URI"):
        gr.vertex_name_from_uri("http://127.0.0.1:1/v1/projects/p")
