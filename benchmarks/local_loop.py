"""The local loop, as issues 13 and 24 state it: each figure a ratio against a floor measured in
the same run, with its target (issue 24's, tighter than issue 13's) and whether it meets it.

1. `vertexkit run training --no-cache --home FRESH` (the CLI as a user runs it, a subprocess, a
   new temp home each time), wall seconds from launch to exit, against the trainer as a plain
   script (`python -m tabular_trainer.task`, the same hyperparameters) on the Parquet splits the
   first run exported (`benchmarks.pipeline_overhead`'s helpers), run once after each run: both
   medians come from the same minutes. Target <= 3.5x.
2. The cached rerun: `vertexkit run training` twice on one home with caching on; the second is
   measured (all its tasks from the cache, checked from the job), against the same trainer
   script, again run once after each. Target <= 1.2x.
3. `vertexkit local up` until its last line prints, against a bare Starlette + uvicorn server
   until it listens (`benchmarks.fast_loop`'s measurement). Target <= 3x.
4. Per-task overhead of a no-op 7-task pipeline (`benchmarks/noop_pipeline.py`):
   through `vertexkit run ... --no-cache`, the PipelineJob's startTime -> endTime / 7; under bare
   `kfp.local` (a fresh `python -c`, `SubprocessRunner(use_venv=False)`, `enable_caching=False`),
   the pipeline call alone / 7. Target <= 1.5x.
5. Peak memory of the whole `vertexkit run training --no-cache` process tree (the CLI and every
   descendant, PSS summed at each ~50 ms sample of /proc, the largest sum kept) beside the
   trainer script's own peak, sampled the same way. No target: reported beside.

Wall seconds are the figures; CPU seconds (user + system of the child and its waited-for
descendants) are printed beside them, the steadier figure on a shared machine. A figure is the
median of up to 3 runs, as many as its time budget allows after the first.

    .venv/bin/python -m benchmarks.local_loop      (about 4-5 minutes on 2 cores)
"""

from __future__ import annotations

import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks import fast_loop, pipeline_overhead
from benchmarks.noop_pipeline import TASKS as NOOP_TASKS
from vertexkit.context import CloudContext
from vertexkit.runner import FinishedRun, effective_values

REPO = Path(__file__).resolve().parents[1]
VERTEXKIT = [sys.executable, "-m", "vertexkit.cli"]
NOOP_REF = "benchmarks.noop_pipeline:noop_pipeline"
AT_MOST = 3
SAMPLE_SECONDS = 0.05
PAGE_BYTES = os.sysconf("SC_PAGE_SIZE")
MIB = 1024 * 1024
BARE_KFP_LOCAL = """
import resource, tempfile, time
from kfp import local
from benchmarks.noop_pipeline import noop_pipeline
def cpu():
    return sum(resource.getrusage(who).ru_utime + resource.getrusage(who).ru_stime
               for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
with tempfile.TemporaryDirectory() as root:
    local.init(runner=local.SubprocessRunner(use_venv=False), pipeline_root=root,
               enable_caching=False)
    started, cpu_before = time.perf_counter(), cpu()
    noop_pipeline()
    print(f"# pipeline call {time.perf_counter() - started} {cpu() - cpu_before}", flush=True)
"""


# -- figures and the table -------------------------------------------------------------------------
@dataclass(frozen=True)
class Figure:
    """One row: what was measured against its floor, and the ratio it must stay under."""

    what: str
    now: float
    floor_name: str
    floor: float
    target: float | None  # the largest ratio that meets; None: reported beside, no target
    unit: str = "s"
    now_cpu: float | None = None
    floor_cpu: float | None = None

    @property
    def ratio(self) -> float:
        return self.now / self.floor

    @property
    def cpu_ratio(self) -> float | None:
        if self.now_cpu is None or not self.floor_cpu:
            return None
        return self.now_cpu / self.floor_cpu

    @property
    def verdict(self) -> str:
        """On the wall-seconds ratio, as the issue states its targets."""
        if self.target is None:
            return "-"
        return "meets" if self.ratio <= self.target else "misses"


def amount(value: float, unit: str, cpu: float | None = None) -> str:
    """`12.30 s (9.10 s CPU)`, `512 MiB`: a value as the table shows it."""
    text = f"{value:.0f} MiB" if unit == "MiB" else f"{value:.2f} {unit}"
    return f"{text} ({cpu:.2f} s CPU)" if cpu is not None else text


def ratios(figure: Figure) -> str:
    """`4.00x`, or `4.00x (3.33x CPU)` where both sides have CPU seconds."""
    cpu = figure.cpu_ratio
    return f"{figure.ratio:.2f}x" + (f" ({cpu:.2f}x CPU)" if cpu is not None else "")


def table_row(figure: Figure) -> list[str]:
    target = f"<= {figure.target:g}x" if figure.target is not None else "-"
    return [
        figure.what,
        amount(figure.now, figure.unit, figure.now_cpu),
        f"{figure.floor_name} {amount(figure.floor, figure.unit, figure.floor_cpu)}",
        ratios(figure),
        target,
        figure.verdict,
    ]


def format_table(figures: Iterable[Figure]) -> str:
    """The issue's table (what | now | floor | ratio | target), plus the verdict."""
    header = ["what", "now", "floor", "ratio", "target", "verdict"]
    rows = [header, ["---"] * len(header), *(table_row(f) for f in figures)]
    return "\n".join("| " + " | ".join(row) + " |" for row in rows)


def runs_within(first_seconds: float, budget_seconds: float, at_most: int = AT_MOST) -> int:
    """How many runs in all a figure gets when its first run took `first_seconds`: up to
    `at_most`, as many as fit in its budget, never fewer than the one already made."""
    if first_seconds <= 0:
        return at_most
    return max(1, min(at_most, int(budget_seconds // first_seconds)))


def repeated(measure: Callable[[], Any], seconds_of: Callable[[Any], float], budget: float) -> list:
    """`measure` once, then again as many times as `runs_within` allows."""
    results = [measure()]
    for _ in range(runs_within(seconds_of(results[0]), budget) - 1):
        results.append(measure())
    return results


def median(values: Iterable[float]) -> float:
    return statistics.median(list(values))


# -- the process tree's memory ---------------------------------------------------------------------
def parent_pid(pid: int) -> int | None:
    """The parent of `pid` from /proc/<pid>/stat, or None once it has gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat.rpartition(")")[2].split()[1])  # after `(comm)`, which may hold spaces


def memory_bytes(pid: int) -> int:
    """The memory `pid` holds: its proportional set size (a page shared by N processes counts
    1/N in each, so a tree's sum counts forked workers' shared pages once) from
    /proc/<pid>/smaps_rollup, or its resident set size where that file is unreadable; 0 once
    the process has gone."""
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1]) * 1024
    except (OSError, IndexError, ValueError):
        pass
    try:
        return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * PAGE_BYTES
    except (OSError, IndexError, ValueError):
        return 0


def live_pids() -> set[int]:
    return {int(entry.name) for entry in os.scandir("/proc") if entry.name.isdigit()}


@dataclass
class ProcessTree:
    """A process and its descendants, found by scanning /proc (no `children` files here).

    Only pids not seen before are read, so a scan stays cheap; a member stays one after its
    parent exits (re-parented), until it exits itself."""

    root: int
    include_root: bool = True
    members: set[int] = field(default_factory=set)
    seen: set[int] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.members.add(self.root)

    def refresh(self) -> set[int]:
        """The tree's live processes now (the root only when `include_root`)."""
        alive = live_pids()
        self.members &= alive | {self.root}
        self.seen &= alive
        self._adopt({pid: parent_pid(pid) for pid in alive - self.seen})
        found = self.members & alive
        return found if self.include_root else found - {self.root}

    def _adopt(self, parents: dict[int, int | None]) -> None:
        """New pids join when their parent is a member; repeated for children born with them."""
        self.seen |= parents.keys()
        pending = dict(parents)
        while joined := {pid for pid, parent in pending.items() if parent in self.members}:
            self.members |= joined
            pending = {pid: parent for pid, parent in pending.items() if pid not in joined}

    def memory_bytes(self) -> int:
        """The tree's memory summed now (`memory_bytes` of each member)."""
        return sum(memory_bytes(pid) for pid in self.refresh())


class PeakSampler:
    """Samples a ProcessTree's summed memory every SAMPLE_SECONDS on a thread; keeps the largest.

    with PeakSampler(ProcessTree(os.getpid(), include_root=False)) as peak: run children
    peak.bytes"""

    def __init__(self, tree: ProcessTree, every: float = SAMPLE_SECONDS) -> None:
        self.tree = tree
        self.every = every
        self.bytes = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def sample(self) -> int:
        now = self.tree.memory_bytes()
        self.bytes = max(self.bytes, now)
        return now

    def _loop(self) -> None:
        while not self._stop.is_set():
            self.sample()
            self._stop.wait(self.every)

    def __enter__(self) -> PeakSampler:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()


def children_peak(sample: bool = True) -> PeakSampler | contextlib.nullcontext[None]:
    """A sampler over every process this benchmark starts (not itself); with `sample` False,
    nothing: a timed run is not sampled, since reading every process's smaps_rollup 20 times a
    second costs about 2 s of CPU over a run of the training pipeline (seconds of wall time on 2
    cores), so memory gets runs of its own."""
    if not sample:
        return contextlib.nullcontext()
    return PeakSampler(ProcessTree(os.getpid(), include_root=False))


def peak_bytes(sampler: PeakSampler | None) -> int:
    return sampler.bytes if sampler is not None else 0


# -- measuring the CLI -----------------------------------------------------------------------------
@dataclass
class CliRun:
    seconds: float
    cpu: float
    peak_bytes: int
    job_name: str
    home: Path


def vertexkit_run(pipeline: str, home: Path, *flags: str, sample: bool = False) -> CliRun:
    """`vertexkit run PIPELINE --home HOME FLAGS` from the repository root, as a user runs it;
    wall and CPU seconds, the job it created, and with `sample` the peak memory (PSS) of its
    process tree (else 0: see `children_peak`)."""
    command = [*VERTEXKIT, "run", pipeline, "--home", str(home), *flags]
    cpu_before = fast_loop.children_cpu()
    with children_peak(sample) as peak:
        started = time.perf_counter()
        done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, check=False)
        seconds = time.perf_counter() - started
    cpu = fast_loop.children_cpu() - cpu_before
    if done.returncode != 0:
        raise RuntimeError(
            f"{' '.join(command[2:])} exited {done.returncode}:\n{done.stdout}{done.stderr}"[-4000:]
        )
    return CliRun(seconds, cpu, peak_bytes(peak), created_job(done.stdout), home)


def created_job(output: str) -> str:
    """The job name from the CLI's `created projects/.../pipelineJobs/ID` line."""
    for line in output.splitlines():
        if line.startswith("created projects/"):
            return line.removeprefix("created ").strip()
    raise RuntimeError(f"`vertexkit run` printed no `created` line:\n{output[-2000:]}")


def read_jobs(home: Path, names: Iterable[str]) -> list[dict[str, Any]]:
    """The finished PipelineJobs as Vertex's JSON, read through the real client from a local
    cloud started on the run's home afterwards (outside every measured interval)."""
    from vertexkit.local import LocalCloud
    from vertexkit.pipeline_jobs import as_dict

    with LocalCloud(home=home) as cloud:
        client = cloud.context().pipeline_client()
        return [as_dict(client.get_pipeline_job(name=name)) for name in names]


def finished_run(job: dict[str, Any]) -> FinishedRun:
    """A FinishedRun (what `pipeline_overhead`'s helpers read: outputs and parameters) from a
    job the CLI ran; the pipeline spec inside the job gives the parameters' defaults."""
    from vertexkit.pipeline_jobs import duration_seconds, pipeline_outputs

    _, project, _, region, *_ = job["name"].split("/")
    given = job.get("runtimeConfig", {}).get("parameterValues") or {}
    return FinishedRun(
        name=job["name"],
        job=job,
        outputs=pipeline_outputs(job),
        seconds=duration_seconds(job) or 0.0,
        pipeline_root=job.get("runtimeConfig", {}).get("gcsOutputDirectory", ""),
        context=CloudContext(project=project, region=region),
        params=effective_values(json.dumps(job["pipelineSpec"]), given),  # JSON is YAML
    )


# -- the figures -----------------------------------------------------------------------------------
@dataclass
class Trainer:
    seconds: float
    cpu: float
    peak_bytes: int


def trainer_floor(run: FinishedRun, home: Path, work: Path) -> Callable[..., Trainer]:
    """The floor: the trainer as a plain script on the run's exported splits; each call of the
    function returned is one run of it (with `sample=True`, its memory sampled)."""
    splits = pipeline_overhead.copy_exported_splits(run, home, work / "data")

    def measure(sample: bool = False) -> Trainer:
        cpu_before = fast_loop.children_cpu()
        with children_peak(sample) as peak:
            seconds = pipeline_overhead.direct_trainer_seconds(run, splits, work)
        return Trainer(seconds, fast_loop.children_cpu() - cpu_before, peak_bytes(peak))

    return measure


def in_turn(
    first: CliRun, measure: Callable[[], CliRun], floor: Callable[[], Trainer], budget: float
) -> tuple[list[CliRun], Trainer]:
    """`first` and as many more runs as the budget allows, each followed by a run of the floor;
    the runs and the floor's medians. Taken in turn, both medians come from the same minutes:
    this machine's speed moves by up to 2x within minutes, and a floor measured after all the
    runs moved a ratio by as much."""
    runs, floors = [first], [floor()]
    for _ in range(runs_within(first.seconds, budget) - 1):
        runs.append(measure())
        floors.append(floor())
    return runs, Trainer(
        median(f.seconds for f in floors), median(f.cpu for f in floors), floors[-1].peak_bytes
    )


def fresh_runs(work: Path) -> tuple[list[CliRun], Trainer, Callable[..., Trainer]]:
    """Figure 1's runs, each on a new home with caching off, in turn with the trainer script on
    the first run's splits; and that floor, for the figures after."""
    homes = iter(work / f"fresh-{n}" for n in range(AT_MOST))
    fresh = lambda: vertexkit_run("training", next(homes), "--no-cache")  # noqa: E731
    first = fresh()
    job = read_jobs(first.home, [first.job_name])[0]
    floor = trainer_floor(finished_run(job), first.home, work)
    runs, trainer = in_turn(first, fresh, floor, 100)
    return runs, trainer, floor


def memory_run(work: Path) -> CliRun:
    """Figure 5's run: a fresh home, caching off, its process tree sampled."""
    return vertexkit_run("training", work / "fresh-sampled", "--no-cache", sample=True)


def cached_runs(
    home: Path, floor: Callable[[], Trainer]
) -> tuple[list[CliRun], Trainer, list[int]]:
    """Figure 2: one run on `home` with caching on fills the cache; the runs after it are
    measured, in turn with the floor. Also: how many tasks each measured run executed (0 when
    all came from cache)."""
    vertexkit_run("training", home)
    cached = lambda: vertexkit_run("training", home)  # noqa: E731
    runs, trainer = in_turn(cached(), cached, floor, 45)
    jobs = read_jobs(home, [r.job_name for r in runs])
    return runs, trainer, [len(pipeline_overhead.task_times(job).executed) for job in jobs]


def local_up(work: Path) -> tuple[tuple[float, float], tuple[float, float]]:
    """Figure 3: ((wall, CPU) of `local up` to ready, (wall, CPU) of the bare server), medians
    of 3 interleaved, as `benchmarks.fast_loop` measures them."""
    command = [*VERTEXKIT, "local", "up", "--home", str(work / "up"), "--port", "0"]
    bare = [sys.executable, "-c", fast_loop.BARE_SERVER]
    ours, floor = [], []
    for _ in range(AT_MOST):
        ours.append(fast_loop.serve_once(command, "# console"))
        floor.append(fast_loop.serve_once(bare, "# listening"))
    return medians(ours), medians(floor)


def medians(pairs: list[tuple[float, float]]) -> tuple[float, float]:
    return median(p[0] for p in pairs), median(p[1] for p in pairs)


def noop_job_seconds(work: Path) -> tuple[float, CliRun]:
    """Figure 4, vertexkit: the no-op pipeline's job startTime -> endTime (median), and the
    first CLI run (its whole wall time is printed beside)."""
    from vertexkit.pipeline_jobs import duration_seconds

    home = work / "noop"
    runs = repeated(lambda: vertexkit_run(NOOP_REF, home, "--no-cache"), lambda r: r.seconds, 45)
    jobs = read_jobs(home, [r.job_name for r in runs])
    return median(duration_seconds(job) or 0.0 for job in jobs), runs[0]


def bare_kfp_local_once() -> tuple[float, float]:
    """(wall, CPU) of the no-op pipeline call alone under bare kfp.local, in a fresh process."""
    done = subprocess.run(
        [sys.executable, "-c", BARE_KFP_LOCAL], cwd=REPO, capture_output=True, text=True
    )
    for line in done.stdout.splitlines():
        if line.startswith("# pipeline call "):
            wall, cpu = line.removeprefix("# pipeline call ").split()
            return float(wall), float(cpu)
    raise RuntimeError(f"bare kfp.local failed ({done.returncode}):\n{done.stderr[-3000:]}")


def bare_kfp_local() -> tuple[float, float]:
    return medians([bare_kfp_local_once() for _ in range(AT_MOST)])


# -- the run ---------------------------------------------------------------------------------------
def progress(text: str) -> None:
    """What has been measured so far, on stderr: the table alone goes to stdout."""
    print(f"  .. {text}", file=sys.stderr, flush=True)


def against_trainer(what: str, runs: list[CliRun], trainer: Trainer, target: float) -> Figure:
    """Runs' median wall and CPU seconds against the trainer script's."""
    return Figure(
        what=what,
        now=median(r.seconds for r in runs),
        now_cpu=median(r.cpu for r in runs),
        floor_name="trainer script",
        floor=trainer.seconds,
        floor_cpu=trainer.cpu,
        target=target,
    )


def training_figures(work: Path) -> tuple[list[Figure], list[str]]:
    """Figures 1, 2 and 5: the training pipeline through the CLI against the trainer script."""
    fresh, fresh_floor, floor = fresh_runs(work)
    progress(f"fresh runs: {', '.join(f'{r.seconds:.1f} s' for r in fresh)}; trainer script "
             f"{fresh_floor.seconds:.2f} s")  # fmt: skip
    cached, cached_floor, executed = cached_runs(fresh[0].home, floor)
    progress(f"cached reruns: {', '.join(f'{r.seconds:.1f} s' for r in cached)}; trainer "
             f"script {cached_floor.seconds:.2f} s")  # fmt: skip
    sampled = memory_run(work)
    progress(f"memory run: {sampled.peak_bytes / MIB:.0f} MiB ({sampled.seconds:.1f} s sampled)")
    floor_peak = floor(sample=True).peak_bytes
    figures = [
        against_trainer("`vertexkit run training --no-cache`, fresh home", fresh, fresh_floor, 3.5),
        against_trainer("the same, cached rerun", cached, cached_floor, 1.2),
        Figure(
            what="peak memory (PSS), `vertexkit run training` process tree",
            now=sampled.peak_bytes / MIB,
            floor_name="trainer script alone",
            floor=floor_peak / MIB,
            target=None,
            unit="MiB",
        ),
    ]
    notes = [
        f"runs: fresh {len(fresh)}, cached {len(cached)} (tasks executed in each: {executed}), "
        "each followed by a run of the trainer script, the floor of its own figure; medians",
        "peak memory: the CLI and all its descendants, proportional set size (PSS: a page "
        "shared by N processes counts 1/N in each) summed per ~50 ms sample of /proc, the "
        "largest sum, in a fresh run of its own (the timed runs are not sampled: sampling costs "
        "about 2 s of CPU a run); the trainer script sampled the same way, in a run of its own",
        "CPU: user + system of the child and the descendants it waited for; for `local up`, to "
        "ready and the stop (what it loads in the background after ready included)",
    ]
    return figures, notes


def startup_figure(work: Path) -> Figure:
    """Figure 3. Its CPU seconds are `fast_loop`'s: to ready and the stop, so they include what
    `local up` loads in the background after it is ready."""
    (up, up_cpu), (bare, bare_cpu) = local_up(work)
    progress(f"local up: {up:.2f} s, bare server {bare:.2f} s")
    return Figure(
        what="`vertexkit local up` to ready",
        now=up,
        now_cpu=up_cpu,
        floor_name="bare Starlette + uvicorn",
        floor=bare,
        floor_cpu=bare_cpu,
        target=3,
    )


def per_task_figure(work: Path) -> tuple[Figure, list[str]]:
    """Figure 4, with both definitions written out."""
    job_seconds, cli = noop_job_seconds(work)
    bare_wall, bare_cpu = bare_kfp_local()
    progress(f"no-op pipeline: job {job_seconds:.2f} s, bare kfp.local {bare_wall:.2f} s")
    figure = Figure(
        what=f"per task, no-op {NOOP_TASKS}-task pipeline, `vertexkit run`",
        now=job_seconds / NOOP_TASKS,
        floor_name="bare kfp.local",
        floor=bare_wall / NOOP_TASKS,
        target=1.5,
    )
    notes = [
        f"per task, vertexkit: the PipelineJob's startTime -> endTime / {NOOP_TASKS}, median of "
        f"{AT_MOST} at most (a whole CLI run: {cli.seconds:.2f} s wall, {cli.cpu:.2f} s CPU)",
        "per task, bare kfp.local: a fresh `python -c`, SubprocessRunner(use_venv=False), "
        f"enable_caching=False, the pipeline call alone / {NOOP_TASKS}, median of {AT_MOST} "
        f"(the call: {bare_wall:.2f} s wall, {bare_cpu:.2f} s CPU)",
    ]
    return figure, notes


def measure(work: Path) -> tuple[list[Figure], list[str]]:
    """Every figure in the issue's order, and the notes printed under the table."""
    training, training_notes = training_figures(work)
    per_task, per_task_notes = per_task_figure(work)
    figures = [*training[:2], startup_figure(work), per_task, training[2]]
    return figures, [*training_notes, *per_task_notes]


def main() -> list[Figure]:
    fast_loop.interruptible_children()
    with tempfile.TemporaryDirectory(prefix="vertexkit-local-loop-") as scratch:
        figures, notes = measure(Path(scratch))
    print(format_table(figures))
    for note in notes:
        print(f"  {note}")
    return figures


if __name__ == "__main__":
    main()
