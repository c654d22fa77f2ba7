"""Writes the Vertex variables it sees (and its argv) as JSON to the local path argv[1]."""

import json
import os
import sys

names = [n for n in os.environ if n.startswith(("AIP_", "CLOUD_ML_", "STORAGE_", "VERTEX_"))]
names += ["CLUSTER_SPEC", "TF_CONFIG", "GOOGLE_CLOUD_PROJECT", "MY_SETTING"]
seen = {name: os.environ.get(name) for name in names}
with open(sys.argv[1], "w") as out:
    json.dump(
        {"env": seen, "all": dict(os.environ), "argv": sys.argv[2:], "python": sys.executable}, out
    )
