"""The `vertexkit` command line's app (`vertexkit.cli.app`), with every verb group's module."""

from __future__ import annotations

import typer

from vertexkit.cli import decisions, demo, jobs, local, pipelines, resources, schedules
from vertexkit.cli.errors import VertexkitGroup

# Every verb runs inside VertexkitGroup.invoke: a user error ends with one `error:` line naming
# the parameter and exit code 2, never a traceback (vertexkit/cli/errors.py).
HELP = "The `vertexkit` command line. Each verb group lives in its own module here."
app = typer.Typer(cls=VertexkitGroup, no_args_is_help=True, add_completion=False, help=HELP)
app.add_typer(local.app, name="local", help="Run the local cloud.")
app.command("demo")(demo.demo)
app.command("compile")(pipelines.compile_command)
app.command("run")(pipelines.run_command)
app.add_typer(resources.models_app, name="models")
app.add_typer(resources.endpoints_app, name="endpoints")
app.command("predict", help=resources.PREDICT_HELP)(resources.predict)
app.add_typer(jobs.jobs_app, name="jobs")
app.command("logs")(jobs.logs)
app.add_typer(schedules.schedule_app, name="schedule")
app.add_typer(schedules.runs_app, name="runs")
app.add_typer(decisions.decisions_app, name="decisions")
