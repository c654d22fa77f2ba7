"""Every field of an in-scope Vertex request has a declared disposition: walked from Google's
`aiplatform_v1` descriptors, so a field a new client release adds fails here until decided."""

from __future__ import annotations

import functools

from vertexkit.local.vertex.dispositions import UNDECIDED, FieldRef, walk_roots
from vertexkit.local.vertex.dispositions.report import REPORT, render
from vertexkit.local.vertex.dispositions.table import declared


@functools.cache
def request_fields() -> tuple[FieldRef, ...]:
    return tuple(ref for ref in walk_roots() if not ref.output_only)


def test_the_walk_reaches_shared_messages_once_and_classifies_output_only() -> None:
    refs = list(walk_roots())
    keys = [ref.key for ref in refs]
    assert len(keys) == len(set(keys))
    by_key = {ref.key: ref for ref in refs}
    v1 = "google.cloud.aiplatform.v1."
    assert by_key[(v1 + "CustomJob", "create_time")].output_only
    accelerator = by_key[(v1 + "MachineSpec", "accelerator_type")]
    assert accelerator.path == "CustomJob.job_spec.worker_pool_specs.machine_spec.accelerator_type"
    assert not accelerator.output_only
    assert not any(ref.message.startswith("google.protobuf.") for ref in refs)


def test_every_request_field_has_a_disposition() -> None:
    table = declared()
    missing = [f"{ref.path} ({ref.message}.{ref.field})" for ref in request_fields()
               if ref.key not in table]  # fmt: skip
    assert missing == [], "fields with no disposition in dispositions/table.py:\n" + "\n".join(
        missing
    )


def test_no_entry_names_a_field_that_does_not_exist() -> None:
    walked = {ref.key for ref in request_fields()}
    stale = sorted(f"{message}.{field}" for message, field in set(declared()) - walked)
    assert stale == [], "entries for no (or an output-only) field: " + ", ".join(stale)


def undecided() -> list[str]:
    table = declared()
    return [
        f"{ref.path}: {table[ref.key].reason}"
        for ref in request_fields()
        if ref.key in table and table[ref.key].kind == UNDECIDED
    ]


def test_no_field_is_silently_ignored() -> None:
    silent = undecided()
    assert silent == [], f"{len(silent)} UNDECIDED fields:\n" + "\n".join(silent)


def test_the_report_is_fresh() -> None:
    assert render() == REPORT.read_text(), (
        "docs/field-dispositions.md is stale: "
        "run `python -m vertexkit.local.vertex.dispositions --write`"
    )
