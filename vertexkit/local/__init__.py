"""The local cloud: Cloud Storage, BigQuery and Vertex AI REST APIs served on 127.0.0.1.

from vertexkit.local import LocalCloud
with LocalCloud(home=".vertexkit") as cloud:
    cloud.context()  # a CloudContext whose clients talk to this server
"""

from vertexkit.local.server import LocalCloud

__all__ = ["LocalCloud"]
