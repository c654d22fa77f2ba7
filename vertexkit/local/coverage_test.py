"""The coverage report is measured, not written: these tests send every method in scope of
Google's discovery documents to a local cloud (`vertexkit.local.coverage`)."""

from __future__ import annotations

import functools

from vertexkit.local import coverage


@functools.cache
def measured() -> tuple[coverage.Answer, ...]:
    """One probe of a fresh local cloud (about 2 s) for the tests below."""
    return tuple(coverage.measure())


def test_scope_is_google_s_documents() -> None:
    # Counted from the discovery documents google-api-python-client ships: BigQuery v2 has 47
    # methods, all in scope; a change here means the pinned client's documents changed.
    methods = coverage.methods_in_scope()
    by_api = {api: sum(m.api == api for m in methods) for api in coverage.TITLES}
    assert by_api["bigquery.v2"] == 47
    assert by_api["aiplatform.v1"] > 250 and by_api["storage.v1"] > 60
    assert ("projects.locations.customJobs", "cancel") in {(m.resource, m.name) for m in methods}


def test_the_generic_not_served_answer_is_told_apart_from_a_refusal() -> None:
    method = coverage.methods_in_scope()[0]
    assert coverage.Answer(method, 404, "not found").verdict == "served"
    assert coverage.Answer(method, 501, "TPU pods are not run locally.").verdict == "refused"
    generic = f"GET /x {coverage.NOT_SERVED_SUFFIX}"
    assert coverage.Answer(method, 501, generic).verdict == "not served"


def test_a_404_with_no_route_behind_it_is_not_served() -> None:
    """A 404 with no Google error body (a framework's) and one whose ID swallowed the method's
    own path words (objects.get answering objects.getIamPolicy's path) are not the method's."""
    wanted = ("storage.v1", "objects", "getIamPolicy")
    iam = next(m for m in coverage.methods_in_scope() if (m.api, m.resource, m.name) == wanted)
    assert iam.path.endswith("/o/1234567/iam")
    assert coverage.Answer(iam, 404, "No such object: probe-bucket/1234567").verdict == "served"
    misrouted = "No such object: probe-bucket/1234567/iam"
    assert coverage.Answer(iam, 404, misrouted).verdict == "not served"
    assert coverage.Answer(iam, 404, "").verdict == "not served"


def test_the_report_is_fresh() -> None:
    assert coverage.render(list(measured())) == coverage.REPORT.read_text(), (
        "docs/api-coverage.md is stale: run `python -m vertexkit.local.coverage --write`"
    )


def test_every_method_in_scope_is_answered() -> None:
    """Sent once each to a running local cloud: none gets the generic 501 (or a 405)."""
    generic = [
        f"{a.method.api} {a.method.resource}.{a.method.name}: {a.status} {a.message}"
        for a in measured()
        if a.verdict == "not served"
    ]
    assert generic == []
