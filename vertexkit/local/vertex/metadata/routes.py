"""Vertex ML Metadata: the default metadata store, its contexts, artifacts and executions, and
the verbs that link them (what the SDK's experiment API calls: `aiplatform.init(experiment=)`,
`start_run`, `log_params`, `log_metrics`, `end_run`, `get_experiment_df`).

An experiment is a `system.Experiment` context; a run is a `system.ExperimentRun` context whose
parent is the experiment and whose `metadata` holds `_params` and `_metrics`, as the SDK writes
them. Which contexts an artifact or execution is in is kept beside it (`_contexts`), so
`in_context(...)` filters and lineage queries read it. Purges and store deletion are in
`maintenance`, artifact lineage in `lineage`, metadata schemas in `schemas`.
"""

from __future__ import annotations

from typing import Any

from vertexkit.local.errors import bad_request, not_found
from vertexkit.local.lifecycle import Lifecycle
from vertexkit.local.vertex import protos
from vertexkit.local.vertex.backend import VertexBackend
from vertexkit.local.vertex.core import fields
from vertexkit.local.vertex.core.area import AreaContext
from vertexkit.local.vertex.core.filters import CONTEXTS_KEY
from vertexkit.local.vertex.core.recipe import Recipe, StandardMethods
from vertexkit.local.vertex.metadata.contexts import default_store
from vertexkit.local.vertex.metadata.lineage import artifact_lineage
from vertexkit.local.vertex.metadata.maintenance import PURGES, Maintenance
from vertexkit.local.vertex.metadata.schemas import MetadataSchemas
from vertexkit.local.vertex.router import VertexRequest
from vertexkit.local.vertex.store import Resource, now_rfc3339, page
from vertexkit.runtime.gapic import aiplatform_v1
from vertexkit.specs.metadata import METADATA_ID, validate_metadata_node, validate_resource_id
from vertexkit.specs.requests import validate_parent

LOCATION = "projects/{project}/locations/{location}"
STORES = "metadataStores"
STORE = f"{LOCATION}/{STORES}/{{store}}"
DEFAULT_STORE = "default"
KINDS = {
    "contexts": Recipe("metadataContexts", "Context", aiplatform_v1.Context, "contextId",
                     METADATA_ID, "contexts", validate_metadata_node, checks_etag=False),
    "artifacts": Recipe("metadataArtifacts", "Artifact", aiplatform_v1.Artifact, "artifactId",
                      METADATA_ID, "artifacts", validate_metadata_node, checks_etag=False),
    "executions": Recipe("metadataExecutions", "Execution", aiplatform_v1.Execution,
                       "executionId", METADATA_ID, "executions", validate_metadata_node,
                       checks_etag=False),
}  # fmt: skip


class MetadataArea(Lifecycle):
    def __init__(self, backend: VertexBackend) -> None:
        self.backend = backend
        self.store = backend.store
        self.nodes = {segment: StandardMethods(backend, kind) for segment, kind in KINDS.items()}
        self.maintenance = Maintenance(backend)
        self.schemas = MetadataSchemas(backend)

    # -- stores -----------------------------------------------------------------------------------
    def ensure_default_store(self, request: VertexRequest) -> None:
        """Vertex makes a location's `default` store on first use; so does the local cloud."""
        validate_parent(request.params["project"], request.params["location"])
        if request.params.get("store") == DEFAULT_STORE:
            default_store(self.store, request.parent)

    def get_store(self, request: VertexRequest) -> Resource:
        self.ensure_default_store(request)
        return self.store.get(request.path, kind="MetadataStore")

    def list_stores(self, request: VertexRequest) -> Resource:
        self.ensure_default_store(VertexRequest("GET", "", {**request.params, "store": "default"},
                                                {}, {}))  # fmt: skip
        return page(self.store.list(STORES, request.path.rsplit("/", 1)[0]), request.query, STORES)

    def create_store(self, request: VertexRequest) -> Resource:
        validate_parent(request.params["project"], request.params["location"])
        body = protos.to_dict(protos.parse(aiplatform_v1.MetadataStore, request.body))
        store_id = request.query.get("metadataStoreId") or DEFAULT_STORE
        validate_resource_id(store_id, "metadataStoreId", METADATA_ID)
        name = f"{request.path}/{store_id}"
        if self.store.find(name) is not None:
            raise bad_request(f"metadataStoreId: store {name} already exists.", "alreadyExists")
        now = now_rfc3339()
        store = {**body, "name": name, "createTime": now, "updateTime": now, "state": {}}
        self.store.insert(STORES, name, store)
        operation = self.backend.operations.run_now(
            name, "CreateMetadataStoreOperationMetadata", "MetadataStore", store
        )
        lines = fields.notes(body, fields.METADATA_STORE_NOTES, "metadataStore")
        return fields.noted_operation(self.store, operation, lines)

    def delete_store(self, request: VertexRequest) -> Resource:
        self.ensure_default_store(request)
        return self.maintenance.delete_store(request)

    def in_store(self, handler: Any) -> Any:
        """`handler` after the location's default store is made, as Vertex makes it."""

        def handle(request: VertexRequest) -> Resource:
            self.ensure_default_store(request)
            return handler(request)

        return handle

    def purge_handler(self, segment: str) -> Any:
        return self.in_store(lambda request: self.maintenance.purge(segment, request))

    # -- nodes ------------------------------------------------------------------------------------
    def node_handler(self, segment: str, verb: str) -> Any:
        resources = self.nodes[segment]

        def handle(request: VertexRequest) -> Resource:
            self.ensure_default_store(request)
            return getattr(resources, verb)(request)

        return handle

    # -- links ------------------------------------------------------------------------------------
    def add_artifacts_and_executions(self, request: VertexRequest) -> Resource:
        context = self.context_of(request)
        names = self.existing("artifacts", request.body.get("artifacts") or [])
        names += self.existing("executions", request.body.get("executions") or [])
        for name in names:
            self.store.mutate(name, lambda node: add_once(node, CONTEXTS_KEY, context))
        return {}

    def add_children(self, request: VertexRequest) -> Resource:
        context = self.context_of(request)
        children = self.existing("childContexts", request.body.get("childContexts") or [])
        if context in children:
            raise bad_request(f"childContexts: a context cannot be its own child ({context}).")
        for child in children:
            self.store.mutate(child, lambda node: add_once(node, "parentContexts", context))
        return {}

    def remove_children(self, request: VertexRequest) -> Resource:
        context = self.context_of(request)
        for child in self.existing("childContexts", request.body.get("childContexts") or []):
            self.store.mutate(child, lambda node: remove(node, "parentContexts", context))
        return {}

    def add_execution_events(self, request: VertexRequest) -> Resource:
        execution = request.path.rsplit(":", 1)[0]
        self.store.get(execution, kind="Execution")
        events = [protos.to_dict(protos.parse(aiplatform_v1.Event, e))
                  for e in request.body.get("events") or []]  # fmt: skip
        self.existing("events.artifact", [e.get("artifact", "") for e in events])
        stamped = [{**e, "eventTime": now_rfc3339()} for e in events]
        self.store.mutate(execution, lambda node: node.setdefault("_events", []).extend(stamped))
        return {}

    def execution_inputs_and_outputs(self, request: VertexRequest) -> Resource:
        execution = self.store.get(request.path.rsplit(":", 1)[0], kind="Execution")
        return self.subgraph([execution])

    def context_lineage(self, request: VertexRequest) -> Resource:
        context = self.context_of(request)
        executions = [e for e in self.store.list("metadataExecutions")
                      if context in e.get(CONTEXTS_KEY, [])]  # fmt: skip
        graph = self.subgraph(executions)
        known = {a["name"] for a in graph.get("artifacts", [])}
        graph["artifacts"] = graph.get("artifacts", []) + [
            StandardMethods.public(a) for a in self.store.list("metadataArtifacts")
            if context in a.get(CONTEXTS_KEY, []) and a["name"] not in known
        ]  # fmt: skip
        return graph

    def subgraph(self, executions: list[Resource]) -> Resource:
        """A LineageSubgraph: the executions, their events and the artifacts those name."""
        events = [
            {**event, "execution": e["name"]} for e in executions for event in e.get("_events", [])
        ]
        artifacts = [self.store.find(name) for name in dict.fromkeys(e["artifact"] for e in events)]
        return {
            "artifacts": [StandardMethods.public(a) for a in artifacts if a is not None],
            "executions": [StandardMethods.public(e) for e in executions],
            "events": events,
        }

    def artifact_lineage(self, request: VertexRequest) -> Resource:
        self.ensure_default_store(request)
        artifact = self.store.get(request.path.rsplit(":", 1)[0], kind="Artifact")
        return artifact_lineage(self.store, artifact, request.query)

    def context_of(self, request: VertexRequest) -> str:
        name = request.path.rsplit(":", 1)[0]
        self.store.get(name, kind="Context")
        return name

    def existing(self, field: str, names: list[str]) -> list[str]:
        for index, name in enumerate(names):
            if self.store.find(name) is None:
                raise not_found(f"{field}[{index}]: {name} does not exist.")
        return list(names)


def add_once(node: Resource, key: str, value: str) -> None:
    if value not in node.setdefault(key, []):
        node[key].append(value)


def remove(node: Resource, key: str, value: str) -> None:
    node[key] = [v for v in node.get(key, []) if v != value]


def register(context: AreaContext) -> MetadataArea:
    router, backend = context.router, context.backend
    area = MetadataArea(backend)
    router.route("GET", f"{LOCATION}/{STORES}")(area.list_stores)
    router.route("POST", f"{LOCATION}/{STORES}")(area.create_store)
    router.route("GET", STORE)(area.get_store)
    router.route("DELETE", STORE)(area.delete_store)
    router.route("POST", f"{STORE}/metadataSchemas")(area.in_store(area.schemas.create))
    router.route("GET", f"{STORE}/metadataSchemas")(area.in_store(area.schemas.list))
    router.route("GET", f"{STORE}/metadataSchemas/{{schema}}")(area.in_store(area.schemas.get))
    for segment in PURGES:
        router.route("POST", f"{STORE}/{segment}:purge")(area.purge_handler(segment))
    for segment, nodes in area.nodes.items():
        own = {method: area.node_handler(segment, method) for method in nodes.kind.methods}
        nodes.register(router, f"{STORE}/{segment}", own)  # each in an existing store
    context = f"{STORE}/contexts/{{node}}"
    execution = f"{STORE}/executions/{{node}}"
    router.route("POST", f"{context}:addContextArtifactsAndExecutions")(
        area.add_artifacts_and_executions
    )
    router.route("POST", f"{context}:addContextChildren")(area.add_children)
    router.route("POST", f"{context}:removeContextChildren")(area.remove_children)
    router.route("GET", f"{context}:queryContextLineageSubgraph")(area.context_lineage)
    router.route("GET", f"{STORE}/artifacts/{{node}}:queryArtifactLineageSubgraph")(
        area.artifact_lineage
    )
    router.route("POST", f"{execution}:addExecutionEvents")(area.add_execution_events)
    router.route("GET", f"{execution}:queryExecutionInputsAndOutputs")(
        area.execution_inputs_and_outputs
    )
    return area
