"""A table's three-part name and its quoting in DuckDB's catalog (see `sql`'s docstring).

Kept apart from `sql`, which imports sqlglot, so that a part of the local cloud naming a table
without translating a query (Vertex's tabular datasets, `vertex/datasets/`) imports neither
sqlglot nor the warehouse: Vertex's areas load before every request, BigQuery's only when needed.
"""

from __future__ import annotations

from dataclasses import dataclass


def quote_identifier(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


@dataclass(frozen=True)
class TableName:
    project: str
    dataset: str
    table: str

    @property
    def schema(self) -> str:
        return f"{self.project}.{self.dataset}"

    @property
    def sql(self) -> str:
        return f"{quote_identifier(self.schema)}.{quote_identifier(self.table)}"

    @property
    def bigquery_id(self) -> str:
        return f"{self.project}:{self.dataset}.{self.table}"
