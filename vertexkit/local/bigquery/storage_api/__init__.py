"""BigQuery's Storage Read and Write APIs (`google.cloud.bigquery.storage.v1`) over gRPC, on the
local warehouse: `server.py` serves them on a port of their own, `read.py` answers read sessions
(Arrow and Avro), `write.py` write streams (proto and Arrow rows). They get the warehouse as a
handle, never the local cloud."""
