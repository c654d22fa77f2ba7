"""What removes metadata in bulk: `artifacts|contexts|executions:purge` and
`metadataStores.delete`.

A purge is parsed with its `aiplatform_v1.Purge*Request`; `filter` is required (the reference)
and read with `filters.compile_filter`, so a filter it cannot read is a 400, never a wider
purge. `force=false` is the reference's dry run: nothing is deleted, the operation's response
holds `purgeCount` and up to 100 names in `purgeSample`; `force=true` deletes and answers
`purgeCount` alone. An artifact's or execution's events go with it. Deleting a store deletes
every context, artifact, execution and schema under it; its `force` parameter is deprecated
("no longer supported", the reference), accepted and without effect, as on Vertex.
"""

from __future__ import annotations

from dataclasses import dataclass

from vertexkit.local.errors import bad_request
from vertexkit.local.vertex import protos
from vertexkit.local.vertex.backend import VertexBackend
from vertexkit.local.vertex.core.filters import compile_filter
from vertexkit.local.vertex.router import VertexRequest
from vertexkit.local.vertex.store import Resource
from vertexkit.runtime.gapic import aiplatform_v1

MAX_SAMPLE = 100
STORE_COLLECTIONS = ("metadataContexts", "metadataArtifacts", "metadataExecutions",
                     "metadataSchemas")  # fmt: skip


@dataclass(frozen=True)
class Purge:
    collection: str  # e.g. "metadataArtifacts"
    request: type  # e.g. aiplatform_v1.PurgeArtifactsRequest
    plural: str  # e.g. "Artifacts": names the operation's metadata and response types


PURGES = {
    "artifacts": Purge("metadataArtifacts", aiplatform_v1.PurgeArtifactsRequest, "Artifacts"),
    "contexts": Purge("metadataContexts", aiplatform_v1.PurgeContextsRequest, "Contexts"),
    "executions": Purge("metadataExecutions", aiplatform_v1.PurgeExecutionsRequest,
                        "Executions"),
}  # fmt: skip


class Maintenance:
    def __init__(self, backend: VertexBackend) -> None:
        self.backend = backend
        self.store = backend.store

    def purge(self, segment: str, request: VertexRequest) -> Resource:
        purge = PURGES[segment]
        body = protos.to_dict(protos.parse(purge.request, request.body))
        if not body.get("filter"):
            raise bad_request(f"filter: required; the {segment} to purge, e.g. "
                              'schema_title="system.Artifact".')  # fmt: skip
        store_name = request.path.rsplit("/", 1)[0]
        self.store.get(store_name, kind="MetadataStore")
        keep = compile_filter(body["filter"])
        names = [r["name"] for r in self.store.list(purge.collection, store_name) if keep(r)]
        response = self.purged(names) if body.get("force") else dry_run(names)
        return self.backend.operations.run_now(
            store_name, f"Purge{purge.plural}Metadata", f"Purge{purge.plural}Response", response
        )

    def purged(self, names: list[str]) -> Resource:
        for name in names:
            self.store.delete(name)
        self.forget_events(set(names))
        return {"purgeCount": str(len(names))}

    def forget_events(self, artifacts: set[str]) -> None:
        """Events naming a deleted artifact go with it (those of a deleted execution already
        went: they are kept on the execution)."""
        for execution in self.store.list("metadataExecutions"):
            events = execution.get("_events", [])
            kept = [e for e in events if e.get("artifact") not in artifacts]
            if len(kept) != len(events):
                self.store.put(execution["name"], {**execution, "_events": kept})

    def delete_store(self, request: VertexRequest) -> Resource:
        self.store.get(request.path, kind="MetadataStore")
        for name in self.names_under(request.path):
            self.store.delete(name)
        self.store.delete(request.path)
        operation = self.backend.operations.start(
            request.path, "DeleteMetadataStoreOperationMetadata"
        )
        return self.backend.operations.finish(operation["name"])  # response: Empty

    def names_under(self, store_name: str) -> list[str]:
        return [r["name"] for collection in STORE_COLLECTIONS
                for r in self.store.list(collection, store_name)]  # fmt: skip


def dry_run(names: list[str]) -> Resource:
    return {"purgeCount": str(len(names)), "purgeSample": names[:MAX_SAMPLE]} if names else {}
