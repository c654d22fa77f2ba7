"""Vertex names every resource and operation with the project NUMBER
(`projects/471889570513/locations/...`), whatever the caller sent, and takes the ID or the
number in a request (recorded Vertex traffic, GoogleCloudPlatform/k8s-config-connector
`.../vertexai/.../vertexaitensorboard/_http.log`: created with `projects/${projectId}`,
answered and polled as `projects/${projectNumber}`).

The local store keys resources by the project ID, as it always has (so a home written before
keeps working): requests are read inward (a number the local cloud has given out becomes its
ID) and answers written outward (every resource name that starts with `projects/<ID>` carries
the number), at the Vertex router, on the JSON text, so no handler sees the difference.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable

from vertexkit.local.projects import project_number

# A resource name wherever it stands (a JSON value, a filter's quoted name, a query value, an
# error message), but not inside another path or word (`gs://b/projects/x`, `myprojects/x`).
OUTWARD = re.compile(r"(?<![\w/.-])projects/([a-z][-a-z0-9]{4,28}[a-z0-9])(?![\w-])")
# In a page: also a name in a URL path (`href="/console/projects/<id>/..."`).
SHOWN = re.compile(r"(?<![\w.-])projects/([a-z][-a-z0-9]{4,28}[a-z0-9])(?![\w-])")
INWARD = re.compile(r"(?<![\w/.-])projects/(\d{6,20})(?![\w-])")


class ProjectNames:
    """The projects' numbers, both ways; every ID seen is remembered with its number."""

    def __init__(self, known: Iterable[str]) -> None:
        self._lock = threading.Lock()
        self._id_by_number = {project_number(project): project for project in known}

    def number(self, project_id: str) -> str:
        number = project_number(project_id)
        with self._lock:
            self._id_by_number.setdefault(number, project_id)
        return number

    def project_id(self, number: str) -> str | None:
        with self._lock:
            return self._id_by_number.get(number)

    def inward_text(self, text: str) -> str:
        """Resource names in a request (its path, query, body), each as the store keys it:
        `projects/<number>` -> `projects/<id>` for a number given out here (an unknown number
        stays, and finds nothing: a 404, as on Vertex)."""
        return INWARD.sub(lambda m: f"projects/{self.project_id(m.group(1)) or m.group(1)}", text)

    def outward_text(self, text: str) -> str:
        """Resource names in an answer (or an error's message), each with its project's number."""
        return OUTWARD.sub(lambda m: f"projects/{self.number(m.group(1))}", text)

    def shown_text(self, text: str) -> str:
        """A console page's names and links, as Vertex names the resources they show."""
        return SHOWN.sub(lambda m: f"projects/{self.number(m.group(1))}", text)
