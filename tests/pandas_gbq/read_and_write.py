"""Run under the local cloud's client hook (a process it starts): pandas-gbq with its defaults.
Prints what it saw as JSON; any warning is an error (pandas-gbq warns when it falls back from
the Storage Read API to the REST pages)."""

import json
import sys
import warnings

import pandas as pd
import pandas_gbq
from google.cloud import bigquery_storage_v1

warnings.simplefilter("error")
# The libraries' notices about their own future (pandas-gbq 0.35's user-agent delimiter, and
# google-cloud-bigquery's deprecation of load_table_from_dataframe, which to_gbq calls) are
# not about the local cloud; every other warning (a Storage API fallback among them) fails.
warnings.simplefilter("ignore", PendingDeprecationWarning)
project, dataset = sys.argv[1], sys.argv[2]
sessions: list[str] = []
create = bigquery_storage_v1.BigQueryReadClient.create_read_session


def counted(self, *args, **kwargs):  # observes the Storage Read API path, changes nothing
    session = create(self, *args, **kwargs)
    sessions.append(session.table)
    return session


bigquery_storage_v1.BigQueryReadClient.create_read_session = counted
frame = pd.DataFrame({"id": [1, 2, 3], "name": ["a", "b", "c"]})
pandas_gbq.to_gbq(frame, f"{dataset}.people", project_id=project)
query = pandas_gbq.read_gbq(
    "SELECT x, CAST(x AS STRING) AS s FROM UNNEST(GENERATE_ARRAY(1, 4)) AS x ORDER BY x",
    project_id=project,
    use_bqstorage_api=True,
    progress_bar_type=None,
)
table = pandas_gbq.read_gbq(
    f"{project}.{dataset}.people",
    project_id=project,
    use_bqstorage_api=True,
    progress_bar_type=None,
)
print(
    json.dumps(
        {
            "query": [len(query), query.iloc[:4].to_dict("list")],
            "table": table.sort_values("id").to_dict("list"),
            "sessions": sessions,
        }
    )
)
