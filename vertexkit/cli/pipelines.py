"""`vertexkit compile` and `vertexkit run`."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer
from rich.text import Text

from vertexkit import pipeline_registry, trainer_staging
from vertexkit.cli import early_cloud
from vertexkit.cli.errors import INTERRUPTED_EXIT, UserError, fail, one_line, plain_console
from vertexkit.cli.options import (
    HomeOption,
    ProjectOption,
    check_display_names,
    checked_directory,
    spec_checked,
)
from vertexkit.cloud_process import CloudProcess
from vertexkit.kfp_loader import import_kfp
from vertexkit.local.vertex.pipelines.warm_tasks import uses_clients
from vertexkit.local_up import running_local_up
from vertexkit.pipeline_params import pipeline_spec
from vertexkit.specs.naming import validate_region

if TYPE_CHECKING:
    from vertexkit.runner import RunInterrupted

console = plain_console()
err_console = plain_console(stderr=True)


def compile_command(
    names: Annotated[
        list[str] | None,
        typer.Argument(help="Built-in names or module:function refs (default: all built-ins)"),
    ] = None,
    image: Annotated[str | None, typer.Option(help="Runtime image for every component")] = None,
    output_dir: Annotated[
        Path, typer.Option(help="Where the YAML goes", callback=checked_directory)
    ] = Path("compiled"),
    check: Annotated[bool, typer.Option(help="Fail if the compiled YAML is stale")] = False,
    staging: Annotated[
        str | None,
        typer.Option(help="gs://BUCKET/PATH where local trainer folders are built and staged"),
    ] = None,
    project: ProjectOption = None,
) -> None:
    """Compile pipelines to KFP IR YAML (one file per pipeline)."""
    import_kfp()
    from vertexkit import compiler  # kfp: imported when a verb needs it

    stale = []
    names = names or sorted(pipeline_registry.BUILTIN_PIPELINES)
    for name in names:  # every name is a pipeline before the first file is written
        pipeline_registry.resolve(name)
    texts = {name: compiler.compile_to_text(name, image) for name in names}
    for name, text in texts.items():  # refused before anything is built, staged or written
        _preflight(text)
        _check_staging(name, text, staging)
    for name, text in texts.items():
        if staging:
            text = _staged(text, staging, project)
        result = compiler.write_compiled(name, text, output_dir, check=check)
        if check and result.stale:
            stale.append(result)
        verb = "stale" if check and result.stale else ("wrote" if result.stale else "fresh")
        console.print(f"{verb:>6} {result.path}", markup=False, highlight=False)
    if stale:
        for result in stale:
            err_console.print(result.diff, highlight=False, markup=False)
        fail(f"{len(stale)} compiled pipeline(s) are stale: run `vertexkit compile`")


def _preflight(pipeline_yaml: str) -> None:
    """The checks `vertexkit run` applies before it creates anything (`vertexkit.preflight`),
    on what compile knows: the pipeline's constants and its parameters' defaults. A pipeline
    `run` would refuse (an e2-standard-4 with a T4) is refused here with the same message."""
    from vertexkit.preflight import check_pipeline
    from vertexkit.runner import effective_values

    check_pipeline(pipeline_spec(pipeline_yaml), effective_values(pipeline_yaml, {}))


def run_command(
    name: Annotated[str, typer.Argument(help="Built-in pipeline name or module:function")],
    param: Annotated[
        list[str] | None, typer.Option("--param", "-p", help="key=value (repeatable)")
    ] = None,
    no_cache: Annotated[
        bool, typer.Option("--no-cache", help="Run every task again (else each task's own caching)")
    ] = False,
    max_parallel: Annotated[
        int | None,
        typer.Option(min=1, help="Task processes at once, locally (default: the core count)"),
    ] = None,
    vertex: Annotated[bool, typer.Option("--vertex", help="Submit to Vertex AI Pipelines")] = False,
    project: ProjectOption = None,
    region: Annotated[
        str,
        typer.Option(help="Vertex region (with --vertex)", callback=spec_checked(validate_region)),
    ] = "us-central1",
    pipeline_root: Annotated[str | None, typer.Option(help="gs:// root (with --vertex)")] = None,
    service_account: Annotated[str | None, typer.Option(help="Runs as (with --vertex)")] = None,
    image: Annotated[str | None, typer.Option(help="Runtime image (with --vertex)")] = None,
    staging: Annotated[
        str | None,
        typer.Option(help="gs:// where local trainer folders are staged (default: under the root)"),
    ] = None,
    home: HomeOption = None,
    wait: Annotated[
        bool,
        typer.Option("--wait/--no-wait", help="Follow the run to its end (--vertex, --kfp-host)"),
    ] = True,
    kfp_host: Annotated[
        str | None,
        typer.Option(
            "--kfp-host",
            help="Run on Kubeflow Pipelines at this URL (a cluster's, or the local cloud's)",
        ),
    ] = None,
    experiment: Annotated[
        str, typer.Option(help="KFP experiment, created when missing (with --kfp-host)")
    ] = "Default",
    namespace: Annotated[
        str | None, typer.Option(help="Kubernetes namespace of a multi-user KFP (--kfp-host)")
    ] = None,
    kfp_token: Annotated[
        str | None,
        typer.Option(
            "--kfp-token",
            help="Bearer token for the KFP API (kfp.Client's existing_token); without it "
            "kfp.Client's own credentials (KF_PIPELINES_* variables, its context file)",
        ),
    ] = None,
) -> None:
    """Run a pipeline: on the local cloud by default, on Vertex AI with --vertex, or on Kubeflow
    Pipelines with --kfp-host."""
    if vertex and kfp_host:
        fail("--vertex and --kfp-host: choose one target")
    with _early_cloud(home, vertex or bool(kfp_host), caching=not no_cache) as cloud_process:
        import_kfp()
        from vertexkit import runner  # kfp and the aiplatform SDK: imported when needed
        from vertexkit.pipeline_jobs import PipelineJobFailed

        pipeline_yaml, params = runner.prepare(name, param or [], image=image)
        check_display_names(params)
        if cloud_process is not None:  # checked: a new home may be made now
            cloud_process.ask_to_serve(clients=uses_clients(pipeline_spec(pipeline_yaml)))
        if kfp_host:
            _run_on_kfp(
                name,
                params,
                pipeline_yaml,
                kfp_host,
                experiment,
                namespace,
                kfp_token,
                project,
                region,
                pipeline_root,
                no_cache,
                wait,
            )
            return
        if vertex:
            _submit_to_vertex(
                name,
                params,
                pipeline_yaml,
                project,
                region,
                pipeline_root,
                service_account,
                image,
                False if no_cache else None,
                wait,
                staging=staging,
            )
            return
        from vertexkit.cli.summary import summarize

        try:
            run = runner.run_pipeline_job(
                name,
                params,
                pipeline_yaml,
                home=home,
                enable_caching=False if no_cache else None,
                emit=progress,
                while_running=lambda run: summarize(console, run),
                max_parallel=max_parallel,
                cloud_process=cloud_process,
            )
        except PipelineJobFailed as exc:
            fail(f"pipeline {name!r} {exc}")
        except runner.RunInterrupted as exc:
            interrupted(interrupted_message(exc))
        if cloud_process is not None:  # its console ended with it: say how to see it again
            err_console.print(console_hint(run.job.get("name", "")), soft_wrap=True)


@contextmanager
def _early_cloud(home: Path | None, vertex: bool, caching: bool) -> Iterator[CloudProcess | None]:
    """The run's local cloud, spawned before kfp is imported and the pipeline compiled, so it
    loads on another core meanwhile (`vertexkit.cloud_process`): none for --vertex, or where a
    `vertexkit local up` serves the home (`vertexkit.local_up`). Closed when the run ends,
    however it ends. The console script may have spawned it already, before the CLI loaded
    (`early_cloud`)."""
    spawned = early_cloud.take(home, caching)  # spawned only where no `local up` served
    if vertex or (spawned is None and running_local_up(home) is not None):
        if spawned is not None:
            spawned.close()
        yield None
        return
    process = spawned or CloudProcess.spawn(home, caching)
    try:
        yield process
    finally:
        process.close()


LOCAL_UP_URL = "http://127.0.0.1:9023"  # `vertexkit local up`'s default port


def interrupted(message: str) -> NoReturn:
    """Ends the command after Ctrl-C: one line saying what became of the run, exit 130."""
    err_console.print(message, soft_wrap=True, highlight=False)
    raise typer.Exit(INTERRUPTED_EXIT)


def interrupted_message(
    exc: RunInterrupted, project: str | None = None, region: str | None = None
) -> str:
    """What Ctrl-C did to the run. Following a run only reads it: on Vertex AI (as with the
    console or `gcloud ... stream-logs`) and on a `vertexkit local up` the run goes on; a run
    on the command's own local cloud cannot outlive the command, so it was cancelled."""
    run_id = exc.job_name.rsplit("/", 1)[-1]
    if exc.where == "vertex":
        target = f" --project {project} --region {region}" if project else ""
        seen = f"; see it at {exc.console_url}" if exc.console_url else ""
        return (
            f"interrupted; the run {run_id} continues on Vertex AI{seen}; cancel it with "
            f"`vertexkit runs cancel {run_id}{target}`"
        )
    if exc.where == "local-up":
        return (
            f"interrupted; the run {run_id} continues on `vertexkit local up`; follow it with "
            f"`vertexkit runs show {run_id}`, cancel it with `vertexkit runs cancel {run_id}`"
        )
    return (
        f"interrupted; the run {run_id} was cancelled: its local cloud ends with this command "
        "(run `vertexkit local up` in another shell for runs that go on after Ctrl-C)"
    )


def console_hint(job_name: str) -> str:
    """After a run on the command's own local cloud, whose console ended with it."""
    return (
        "note: the console link above ended with this command; `vertexkit local up` serves "
        f"the console again: {LOCAL_UP_URL}/console/{job_name}"
    )


def progress(line: str) -> None:
    """One line per task state change, printed as it is seen."""
    console.print(line, highlight=False, markup=False, soft_wrap=True)
    sys.stdout.flush()


def _check_staging(name: str, pipeline_yaml: str, staging: str | None) -> None:
    """A pipeline that names local trainer folders compiles only with a place to stage them."""
    if staging is not None and not staging.startswith("gs://"):
        raise UserError("--staging", f"must be gs://BUCKET[/PATH], got {staging!r}")
    local = trainer_staging.local_trainer_dirs(pipeline_yaml)
    if local and not staging:
        raise UserError(
            "--staging",
            f"pipeline {name!r} names local trainer folder(s) {local}, which the runtime image "
            "does not hold: give --staging gs://BUCKET/PATH to build and stage them",
        )


def _staged(pipeline_yaml: str, staging: str, project: str | None) -> str:
    from vertexkit.context import CloudContext

    if not trainer_staging.local_trainer_dirs(pipeline_yaml):
        return pipeline_yaml
    try:
        context = CloudContext.from_env(project)
    except ValueError as exc:
        raise UserError("--project", str(exc)) from None
    return trainer_staging.stage_with_context(pipeline_yaml, staging, context)


def _run_on_kfp(
    name: str,
    params: dict,
    pipeline_yaml: str,
    host: str,
    experiment: str,
    namespace: str | None,
    token: str | None,
    project: str | None,
    region: str,
    pipeline_root: str | None,
    no_cache: bool,
    wait: bool,
) -> None:
    """`--kfp-host`: upload or reuse the version, run it, follow it (`vertexkit.kfp_runs`)."""
    from vertexkit import kfp_runs, runner
    from vertexkit.cli.summary import summarize_kfp
    from vertexkit.pipeline_jobs import PipelineJobFailed

    if pipeline_root is not None and not pipeline_root.startswith(("gs://", "minio://", "s3://")):
        raise UserError(
            "--pipeline-root", f"must be gs://, minio:// or s3://, got {pipeline_root!r}"
        )
    _check_staging(name, pipeline_yaml, None)  # a local trainer folder never reaches a cluster
    # What a run fills from its target, where given: the project and region of the Vertex
    # resources its components create, and its gcs_root under --pipeline-root.
    target = {"location": region}
    if project:
        target["project"] = project
    if pipeline_root and pipeline_root.startswith("gs://"):
        target["gcs_root"] = f"{pipeline_root.rstrip('/')}/{name}"
    declared = runner.declared_parameters(pipeline_yaml)
    values = {k: v for k, v in target.items() if k in declared} | params
    if no_cache:
        pipeline_yaml = kfp_runs.without_caching(pipeline_yaml)
    try:
        run = kfp_runs.run_on_kfp(
            name,
            pipeline_yaml,
            values,
            host,
            experiment,
            namespace=namespace,
            token=token,
            pipeline_root=pipeline_root,
            wait=wait,
            emit=progress,
        )
    except PipelineJobFailed as exc:
        fail(f"pipeline {name!r} {exc}")
    except kfp_runs.KFP_UNREACHABLE as exc:
        fail(f"cannot reach the KFP API at {host}: {one_line(str(exc))[:300]}", "--kfp-host")
    except kfp_runs.kfp_api_error() as exc:
        fail(f"the KFP API at {host} refused: {kfp_runs.api_error_message(exc)}", "--kfp-host")
    if wait:
        summarize_kfp(console, run, runner.effective_values(pipeline_yaml, values))


def _submit_to_vertex(
    name: str,
    params: dict,
    pipeline_yaml: str,
    project: str | None,
    region: str,
    pipeline_root: str | None,
    service_account: str | None,
    image: str | None,
    caching: bool | None,
    wait: bool,
    staging: str | None = None,
) -> None:
    if not project or not pipeline_root:
        fail("--vertex needs --project and --pipeline-root gs://BUCKET/PATH")
    from vertexkit import runner
    from vertexkit.pipeline_jobs import PipelineJobFailed

    staging = staging or f"{pipeline_root.rstrip('/')}/staging"
    _check_staging(name, pipeline_yaml, staging)
    warning = runner.image_warning(image)
    if warning:
        err_console.print(Text.assemble(("warning:", "yellow"), " ", warning))
    # A local trainer folder is built and staged (under the root by default), as its package URI.
    pipeline_yaml = _staged(pipeline_yaml, staging, project)
    job = runner.build_vertex_job(
        name, params, pipeline_yaml, project, region, pipeline_root, enable_caching=caching
    )
    try:
        runner.submit_vertex_job(job, service_account, wait, emit=progress)
    except PipelineJobFailed as exc:
        fail(f"pipeline {name!r} {exc}")
    except runner.RunInterrupted as exc:
        interrupted(interrupted_message(exc, project, region))
