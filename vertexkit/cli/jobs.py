"""`vertexkit logs JOB`: print the logs the local cloud kept for a custom or tuning job."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from vertexkit.cli.errors import UserError
from vertexkit.cli.options import HomeOption
from vertexkit.local.server import default_home


def job_log_files(home: Path, job: str) -> list[Path]:
    """job.log first, then every replica's log (per trial for tuning jobs), in order."""
    job_dir = home / "vertex" / "training" / job.rstrip("/").rsplit("/", 1)[-1]
    if not job_dir.is_dir():
        return []
    replica_logs = sorted(job_dir.rglob("workerpool*.log"), key=_log_order)
    return [p for p in [job_dir / "job.log", *replica_logs] if p.is_file()]


def _log_order(path: Path) -> tuple[int, str]:
    trial = path.parent.name.removeprefix("trial-")
    return (int(trial) if trial.isdigit() else 0, path.name)


def logs(
    job: Annotated[str, typer.Argument(help="Job ID or resource name (custom or tuning job)")],
    home: HomeOption = None,
) -> None:
    """Print a local job's logs: what the local cloud did, then each replica's output."""
    root = home.resolve() if home else default_home()
    files = job_log_files(root, job)
    if not files:
        raise UserError("JOB", f"no logs for job {job!r} under {root}")
    for path in files:
        typer.echo(f"==> {path.relative_to(root)} <==")
        typer.echo(path.read_text(errors="replace"), nl=False)
