"""How much of Google's API surface the local cloud answers, measured against Google's own
descriptions: the discovery documents google-api-python-client ships (`aiplatform.v1`,
`bigquery.v2`, `storage.v1`).

Every method in scope is sent once, with placeholder ids and an empty body, to a local cloud
started in a throwaway home. What comes back decides its row in `docs/api-coverage.md`:
- **served**: any answer but a 501 or 405 (a 404 for the placeholder resource, a 400 for the
  empty body, a 200 are all the method being read);
- **refused**: a 501 with a reason of its own (`errors.refused`: "TPU pods are not run locally");
- **not served**: the generic 501 of a path nothing handles (`errors.not_served`), a 405, or a
  404 that is not the method's: no Google error body, or an ID that swallowed the method's own
  path words (`No such object: probe-bucket/1234567/iam` for objects.getIamPolicy).

`python -m vertexkit.local.coverage --write` rewrites the report; the suite fails when it is stale
(`vertexkit/local/coverage_test.py`), as it does for `compiled/`.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx

from vertexkit.local.discovery import google_document
from vertexkit.local.errors import NOT_SERVED_SUFFIX

REPORT = Path(__file__).resolve().parents[2] / "docs" / "api-coverage.md"
PROJECT = "local-project"
REGION = "us-central1"

# The Vertex AI families this project covers (the collections under projects.locations);
# the rest of aiplatform.v1 (Gemini, agents, feature stores, RAG, notebooks...) is not in scope.
VERTEX_FAMILIES = frozenset({
    "customJobs", "hyperparameterTuningJobs", "trainingPipelines", "models", "endpoints",
    "batchPredictionJobs", "datasets", "pipelineJobs", "schedules", "metadataStores",
    "tensorboards", "studies", "persistentResources", "deploymentResourcePools", "operations",
})  # fmt: skip
# Generative-AI methods and sub-collections of endpoints: not custom training's.
VERTEX_GENAI = frozenset({
    "endpoints.computeTokens", "endpoints.countTokens", "endpoints.generateContent",
    "endpoints.streamGenerateContent", "endpoints.fetchPredictOperation",
    "endpoints.predictLongRunning", "endpoints.chat", "endpoints.invoke", "endpoints.openapi",
    "endpoints.responses", "endpoints.google", "endpoints.deployedModels",
})  # fmt: skip
# Cloud Storage's caches and bucket relocation: an edge service and a migration, neither local.
STORAGE_LEFT_OUT = frozenset({
    "anywhereCaches", "rapidCaches", "buckets.relocate", "operations.advanceRelocateBucket",
})  # fmt: skip


@dataclass(frozen=True)
class Method:
    api: str  # "aiplatform.v1"
    resource: str  # "projects.locations.customJobs.operations"
    name: str  # "cancel"
    http_method: str
    path: str  # a request path with placeholder ids: "/v1/projects/local-project/..."


@dataclass(frozen=True)
class Answer:
    method: Method
    status: int
    message: str

    @property
    def verdict(self) -> str:
        if self.status == 405:  # a path served for other methods: this one is not read at all
            return "not served"
        if self.status == 404 and not self._names_the_resource():
            return "not served"
        if self.status != 501:
            return "served"
        return "not served" if self.message.endswith(NOT_SERVED_SUFFIX) else "refused"

    def _names_the_resource(self) -> bool:
        """A 404 is the method's answer ("no such resource") only when a handler of this path
        gave it in Google's error shape, and it does not name an ID that swallowed the method's
        own path words (`No such object: b/1234567/iam`: objects.get read objects.getIamPolicy's
        path, and answered for an object named `1234567/iam`)."""
        if not self.message:  # no Google error body: a framework's 404, not a handler's
            return False
        lowered = self.message.lower()
        return not any(
            token.lower() in lowered or token.replace("/", "%2F").lower() in lowered
            for token in swallowed_tokens(self.method.path)
        )


def swallowed_tokens(path: str) -> list[str]:
    """`<last placeholder id>/<literal>`: the method's own words after its last ID (`iam` in
    `b/probe-bucket/o/1234567/iam`), which a route taking the ID as a path would swallow."""
    ids = {*PLACEHOLDERS.values(), PLACEHOLDER_ID}
    segments = [segment.split(":")[0] for segment in path.strip("/").split("/")]
    last = max((i for i, segment in enumerate(segments) if segment in ids), default=-1)
    if last < 0 or last + 1 >= len(segments):
        return []
    return [f"{segments[last]}/{segments[last + 1]}"]


def methods_in_scope() -> list[Method]:
    return [*_vertex_methods(), *_bigquery_methods(), *_storage_methods()]


def _walk(resources: dict, prefix: str) -> Iterator[tuple[str, str, dict]]:
    for name, resource in resources.items():
        path = f"{prefix}.{name}" if prefix else name
        for method_name, method in resource.get("methods", {}).items():
            yield path, method_name, method
        yield from _walk(resource.get("resources", {}), path)


def _vertex_methods() -> Iterator[Method]:
    document = google_document("aiplatform", "v1")
    locations = document["resources"]["projects"]["resources"]["locations"]["resources"]
    for resource, name, method in _walk(locations, ""):
        family = resource.split(".")[0]
        if family not in VERTEX_FAMILIES or {f"{resource}.{name}", _two(resource)} & VERTEX_GENAI:
            continue
        path = "/" + _placeholders(method.get("flatPath", method["path"]))
        yield Method("aiplatform.v1", f"projects.locations.{resource}", name,
                     method["httpMethod"], path)  # fmt: skip


def _two(resource: str) -> str:
    return ".".join(resource.split(".")[:2])


def _bigquery_methods() -> Iterator[Method]:
    document = google_document("bigquery", "v2")
    for resource, name, method in _walk(document["resources"], ""):
        path = "/bigquery/v2/" + _placeholders(method.get("flatPath", method["path"]))
        yield Method("bigquery.v2", resource, name, method["httpMethod"], path)


def _storage_methods() -> Iterator[Method]:
    document = google_document("storage", "v1")
    for resource, name, method in _walk(document["resources"], ""):
        if resource in STORAGE_LEFT_OUT or f"{resource}.{name}" in STORAGE_LEFT_OUT:
            continue
        path = "/storage/v1/" + _placeholders(method.get("flatPath", method["path"]))
        yield Method("storage.v1", resource, name, method["httpMethod"], path)


PLACEHOLDERS = {
    "projectsId": PROJECT, "projectId": PROJECT, "locationsId": REGION,
    "bucket": "probe-bucket", "sourceBucket": "probe-bucket", "destinationBucket": "probe-bucket",
    "datasetsId": "probe_dataset", "tablesId": "probe_table",
}  # fmt: skip
PLACEHOLDER_ID = "1234567"


def _placeholders(flat_path: str) -> str:
    """A request path for a templated one: ids that name nothing (so a get is a 404)."""
    return re.sub(r"\{([^}]+)\}", lambda m: PLACEHOLDERS.get(m.group(1), PLACEHOLDER_ID), flat_path)


def probe(base_url: str, methods: list[Method]) -> list[Answer]:
    """Sends each method once: an empty JSON body to those that take one. The placeholder
    bucket exists (so an object method's 404 is about its object, not the bucket), and the
    deletes go last (so `buckets.delete` does not take it from the methods after it)."""
    answers: dict[int, Answer] = {}
    order = sorted(range(len(methods)), key=lambda i: methods[i].http_method == "DELETE")
    with httpx.Client(base_url=base_url, timeout=60) as client:
        client.post("/storage/v1/b", params={"project": PROJECT},
                    json={"name": PLACEHOLDERS["bucket"]})  # fmt: skip
        for index in order:
            method = methods[index]
            body = {} if method.http_method in ("POST", "PUT", "PATCH") else None
            response = client.request(method.http_method, method.path, json=body)
            answers[index] = Answer(method, response.status_code, _message(response))
    return [answers[index] for index in range(len(methods))]


def _message(response: httpx.Response) -> str:
    try:
        return str(response.json()["error"]["message"])
    except (ValueError, KeyError, TypeError):
        return ""


def measure() -> list[Answer]:
    """Starts a local cloud in a throwaway home and probes every method in scope."""
    from vertexkit.local.server import LocalCloud

    with (
        tempfile.TemporaryDirectory(prefix="vertexkit-coverage-") as home,
        LocalCloud(home=home, project=PROJECT, region=REGION) as cloud,
    ):
        return probe(cloud.url, methods_in_scope())


INTRO = """# API coverage of the local cloud

Generated by `python -m vertexkit.local.coverage --write` from the discovery documents that
google-api-python-client ships; `make test` fails when it is stale. Every method in scope was
sent once to a local cloud (placeholder ids, an empty body):
- **served**: any answer but a 501 or 405 (a 404 for the placeholder resource, a 400 for the
  empty body, a 200: the method was read);
- **refused**: a 501 giving its own reason, quoted in the table;
- **not served**: the generic 501 of a path nothing handles, a 405, or a 404 another route gave
  (no Google error body, or an ID that took in the method's own path words).

In scope: the Vertex AI families of custom training, tuning, pipelines, models, serving and
metadata ({scope}; generative-AI methods left out), all of BigQuery v2, and Cloud Storage v1
without its caches and bucket relocation."""

TITLES = {
    "aiplatform.v1": "Vertex AI (`aiplatform.v1`)",
    "bigquery.v2": "BigQuery (`bigquery.v2`)",
    "storage.v1": "Cloud Storage (`storage.v1`)",
}


def render(answers: list[Answer]) -> str:
    scope = ", ".join(sorted(VERTEX_FAMILIES))
    header = ["| API | methods | served | refused | not served |", "|---|---|---|---|---|"]
    lines = [*INTRO.format(scope=scope).splitlines(), "", *header]
    by_api: dict[str, list[Answer]] = {}
    for answer in answers:
        by_api.setdefault(answer.method.api, []).append(answer)
    for api, group in by_api.items():
        counts = Counter(a.verdict for a in group)
        lines.append(f"| {TITLES[api]} | {len(group)} | {counts['served']} | "
                     f"{counts['refused']} | {counts['not served']} |")  # fmt: skip
    for api, group in by_api.items():
        lines += ["", f"## {TITLES[api]}", "", "| resource | method | verdict |", "|---|---|---|"]
        for a in group:
            verdict = a.verdict if a.verdict != "refused" else f"refused: {_cell(a.message)}"
            lines.append(f"| {a.method.resource} | {a.method.name} | {verdict} |")
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m vertexkit.local.coverage")
    parser.add_argument("--write", action="store_true", help=f"rewrite {REPORT.name}")
    args = parser.parse_args(argv)
    text = render(measure())
    if args.write:
        REPORT.write_text(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
