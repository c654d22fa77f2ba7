"""What a dataset holds besides its source: data items, their annotations, annotation specs and
saved queries (annotation sets), and `searchDataItems` over them.

Vertex keeps data items only for image, text and video datasets, filled by `datasets.import`;
a tabular dataset reads its rows from its `metadata.inputConfig` source and has no data items,
annotations, annotation specs or saved queries. The local cloud holds tabular datasets only
(other kinds are refused at create), so every list answers empty for an existing dataset and
every single item is NOT_FOUND; a missing dataset is NOT_FOUND. `filter`, `orderBy` and
`readMask` are checked by nothing here and refused when set, rather than ignored.
"""

from __future__ import annotations

from vertexkit.local.errors import not_found
from vertexkit.local.vertex.backend import VertexBackend
from vertexkit.local.vertex.datasets.versions import reject_unread, validate_list
from vertexkit.local.vertex.router import VertexRequest
from vertexkit.local.vertex.store import Resource

TABULAR_HAS_NONE = "a tabular dataset has no data items, annotations or annotation specs"
SEARCH_PARAMETERS = ("orderByDataItem", "orderByAnnotation.savedQuery", "orderBy",
                     "orderByAnnotation.orderBy", "savedQuery", "dataLabelingJob",
                     "dataItemFilter", "annotationsFilter", "annotationFilters",
                     "fieldMask")  # fmt: skip


class DatasetItems:
    def __init__(self, backend: VertexBackend) -> None:
        self.store = backend.store

    def dataset(self, name: str) -> Resource:
        """The dataset a name lives under: `projects/p/locations/l/datasets/d` (its first six
        segments)."""
        return self.store.get("/".join(name.split(":")[0].split("/")[:6]), kind="Dataset")

    def list_data_items(self, request: VertexRequest) -> Resource:
        validate_list(request.query)
        self.dataset(request.path)
        return {}

    def list_annotations(self, request: VertexRequest) -> Resource:
        validate_list(request.query)
        raise self.missing(request.path.rsplit("/", 1)[0], "DataItem")

    def get_annotation_spec(self, request: VertexRequest) -> Resource:
        reject_unread(request.query, ("readMask",))
        raise self.missing(request.path, "AnnotationSpec")

    def list_saved_queries(self, request: VertexRequest) -> Resource:
        validate_list(request.query)
        self.dataset(request.path)
        return {}

    def delete_saved_query(self, request: VertexRequest) -> Resource:
        raise self.missing(request.path, "SavedQuery")

    def search_data_items(self, request: VertexRequest) -> Resource:
        reject_unread(request.query, SEARCH_PARAMETERS)
        validate_list(request.query)
        self.dataset(request.path.rsplit(":", 1)[0])
        return {}

    def missing(self, name: str, kind: str) -> Exception:
        """NOT_FOUND for `name`, after the dataset it would live in is checked."""
        self.dataset(name)
        return not_found(f'{kind} "{name}" not found: {TABULAR_HAS_NONE}.')
