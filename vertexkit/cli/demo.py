"""`vertexkit demo`: start the local cloud, run a short BigQuery query, stop."""

from __future__ import annotations

from rich.table import Table

from vertexkit.cli.errors import plain_console

DEMO_QUERY = """
SELECT species, COUNT(*) AS penguins, ROUND(AVG(body_mass_g), 1) AS mean_body_mass_g
FROM `bigquery-public-data.ml_datasets.penguins`
GROUP BY species ORDER BY species
"""


def demo() -> None:
    """Query the seeded penguins table through the real BigQuery client, locally."""
    from vertexkit.local import LocalCloud  # the server's web stack: not for every verb's start

    console = plain_console()
    with LocalCloud() as cloud:
        console.print(f"local cloud on {cloud.url}, state in {cloud.home}")
        client = cloud.context().bigquery_client()
        frame = client.query(DEMO_QUERY).to_dataframe(create_bqstorage_client=False)
    table = Table(title="bigquery-public-data.ml_datasets.penguins, locally")
    for column in frame.columns:
        table.add_column(str(column))
    for row in frame.itertuples(index=False):
        table.add_row(*(str(value) for value in row))
    console.print(table)
