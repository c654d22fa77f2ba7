"""The four dispositions (plus UNDECIDED, the finding) and the constructors the table uses."""

from __future__ import annotations

from dataclasses import dataclass

HONOURED = "HONOURED"  # the local cloud does what Vertex does with it
NO_LOCAL_EFFECT = "NO_LOCAL_EFFECT"  # accepted, changes nothing here, said once in the log
REFUSED = "REFUSED"  # a 400 naming the field and why
OUTPUT_ONLY = "OUTPUT_ONLY"  # Google ignores it in requests (classified from the descriptors)
UNDECIDED = "UNDECIDED"  # accepted and ignored today: the silent fields to drive to zero

KINDS = (HONOURED, NO_LOCAL_EFFECT, REFUSED, OUTPUT_ONLY, UNDECIDED)
PACKAGE = "google.cloud.aiplatform.v1."


@dataclass(frozen=True)
class Disposition:
    kind: str
    reason: str


@dataclass(frozen=True)
class FieldRef:
    """One field as the walk first reaches it: its key and the path it was reached by."""

    message: str  # full name, e.g. google.cloud.aiplatform.v1.MachineSpec
    field: str  # proto (snake_case) name
    json_name: str
    path: str  # e.g. CustomJob.job_spec.worker_pool_specs.machine_spec.accelerator_type
    root: str  # the root message's short name
    output_only: bool

    @property
    def key(self) -> tuple[str, str]:
        return (self.message, self.field)

    @property
    def short_message(self) -> str:
        return self.message.removeprefix(PACKAGE)


def honoured(reason: str) -> Disposition:
    return Disposition(HONOURED, reason)


def no_local_effect(reason: str) -> Disposition:
    return Disposition(NO_LOCAL_EFFECT, reason)


def refused(reason: str) -> Disposition:
    return Disposition(REFUSED, reason)


def undecided(reason: str) -> Disposition:
    return Disposition(UNDECIDED, reason)
