"""Reading a pipeline package as the KFP API server does: YAML or JSON, or a .tar.gz / .tgz / .zip
holding one; a second YAML document is the platform spec."""

from __future__ import annotations

import io
import json
import tarfile
import zipfile
from typing import Any

import yaml

from vertexkit.local.kfp.errors import invalid

Resource = dict[str, Any]


def read_package(filename: str, data: bytes) -> Resource:
    """The package's pipeline spec (as `{pipeline_spec, platform_spec}` when it has both)."""
    lower = filename.lower()
    if lower.endswith((".tar.gz", ".tgz")):
        data = _from_tar(data)
    elif lower.endswith(".zip"):
        data = _from_zip(data)
    try:
        documents = [doc for doc in yaml.safe_load_all(data.decode("utf-8")) if doc is not None]
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise invalid(
            f"uploadfile: {filename!r} is not a YAML or JSON pipeline spec ({exc})"
        ) from None
    if not documents:
        raise invalid(f"uploadfile: {filename!r} is empty")
    if len(documents) > 2:
        raise invalid(
            f"uploadfile: {filename!r} holds {len(documents)} documents; a pipeline "
            "package holds a pipeline spec and at most a platform spec"
        )
    if len(documents) == 2:
        return {"pipeline_spec": documents[0], "platform_spec": documents[1]}
    return documents[0]


def _from_tar(data: bytes) -> bytes:
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as archive:
            members = [
                m
                for m in archive.getmembers()
                if m.isfile() and m.name.endswith((".yaml", ".yml", ".json"))
            ]
            if len(members) != 1:
                raise invalid("uploadfile: the archive must hold exactly one .yaml/.yml/.json")
            extracted = archive.extractfile(members[0])
            return extracted.read() if extracted else b""
    except tarfile.TarError as exc:
        raise invalid(f"uploadfile: not a gzipped tar ({exc})") from None


def _from_zip(data: bytes) -> bytes:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            names = [n for n in archive.namelist() if n.endswith((".yaml", ".yml", ".json"))]
            if len(names) != 1:
                raise invalid("uploadfile: the archive must hold exactly one .yaml/.yml/.json")
            return archive.read(names[0])
    except zipfile.BadZipFile as exc:
        raise invalid(f"uploadfile: not a zip ({exc})") from None


def split_spec(document: Any, where: str) -> Resource:
    """The PipelineSpec of a stored or sent spec, checked; a platform spec with settings is
    refused (kfp-kubernetes' secrets, volumes, node selectors have no local equivalent)."""
    if isinstance(document, str):
        try:
            document = json.loads(document)
        except json.JSONDecodeError:
            raise invalid(f"{where}: not a JSON pipeline spec") from None
    if not isinstance(document, dict):
        raise invalid(f"{where}: expected a pipeline spec object")
    platform = None
    if "pipeline_spec" in document and "pipelineInfo" not in document:
        platform = document.get("platform_spec")
        document = document["pipeline_spec"]
    if not isinstance(document, dict):
        raise invalid(f"{where}: expected a pipeline spec object")
    if "apiVersion" in document and "pipelineInfo" not in document:
        raise invalid(
            f"{where}: a KFP v1 (Argo workflow) package is not served; compile the "
            "pipeline with kfp 2"
        )
    if not (document.get("pipelineInfo") or {}).get("name"):
        raise invalid(f"{where}: pipelineInfo.name is required (a compiled KFP PipelineSpec)")
    if not (document.get("root") or {}).get("dag"):
        raise invalid(f"{where}: root.dag is required (a compiled KFP PipelineSpec)")
    if _has_settings(platform):
        raise invalid(
            f"{where}.platform_spec: Kubernetes platform settings (kfp-kubernetes) "
            "have no local equivalent"
        )
    return document


def _has_settings(value: Any) -> bool:
    if isinstance(value, dict):
        return any(_has_settings(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_settings(v) for v in value)
    return value not in (None, "", 0, False)
