"""Google's discovery documents served by the local cloud, read by google-api-python-client's
own `build`: the documents are Google's, only their URLs point here, so a discovery-built
client's requests land on the local services."""

from __future__ import annotations

import pytest
import requests
from google.auth.credentials import AnonymousCredentials
from googleapiclient.discovery import build

from vertexkit.local import LocalCloud
from vertexkit.local.discovery import google_document

DISCOVERY = "$discovery/rest"  # as each Google API host serves its own document


def test_bigquery_document_at_its_host_path(local_cloud: LocalCloud) -> None:
    answer = requests.get(
        f"{local_cloud.url}/$discovery/rest", params={"version": "v2"}, timeout=10
    )
    document = answer.json()
    assert (document["name"], document["version"]) == ("bigquery", "v2")
    assert document["rootUrl"] == local_cloud.url + "/"
    assert document["baseUrl"] == local_cloud.url + "/bigquery/v2/"
    assert document["resources"] == google_document("bigquery", "v2")["resources"]


@pytest.mark.parametrize(("query", "code"), [("v1", 400), ("v9", 400)])
def test_an_ambiguous_or_unknown_version_is_refused(
    local_cloud: LocalCloud, query: str, code: int
) -> None:
    answer = requests.get(
        f"{local_cloud.url}/$discovery/rest", params={"version": query}, timeout=10
    )
    assert answer.status_code == code and "/discovery/v1/apis/" in answer.json()["error"]["message"]


def test_a_discovery_built_storage_client_reaches_the_local_storage(
    local_cloud: LocalCloud,
) -> None:
    local_cloud.context().storage_client().create_bucket("built-from-discovery")
    service = build(
        "storage", "v1", credentials=AnonymousCredentials(), static_discovery=False,
        discoveryServiceUrl=f"{local_cloud.url}/discovery/v1/apis/{{api}}/{{apiVersion}}/rest",
    )  # fmt: skip
    listed = service.buckets().list(project=local_cloud.project).execute()
    assert "built-from-discovery" in [bucket["name"] for bucket in listed["items"]]
