"""Hyperparameter tuning jobs: a Vertex study spec driven by an Optuna study.

Algorithms: the default (Vertex's Bayesian search) -> TPE, RANDOM_SEARCH -> random sampling,
GRID_SEARCH -> Optuna's grid over discrete, categorical and integer values. Samplers are seeded:
from the job label `vertexkit-seed` when present (a local-only convenience for reproducible
runs), else from the job ID. Each trial runs the trial job spec's worker pools with
`--name=value` appended and reports through cloudml-hypertune, whose metric file
(`CLOUD_ML_HP_METRIC_FILE`) is private to the trial.
"""

from __future__ import annotations

import itertools
import json
import random
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vertexkit.local.vertex import protos
from vertexkit.local.vertex.jobs import states
from vertexkit.local.vertex.jobs.lifecycle import JobControl, JobLog, Outcome
from vertexkit.local.vertex.store import now_rfc3339
from vertexkit.local.vertex.training.execution import Executor
from vertexkit.local.vertex.training.packages import PackageError
from vertexkit.local.vertex.training.runner import ClusterPlan
from vertexkit.runtime.gapic import aiplatform_v1
from vertexkit.specs import SpecError

if TYPE_CHECKING:  # Optuna (0.2 s to import) loads when a tuning job starts: `_optuna()`
    import optuna

SEED_LABEL = "vertexkit-seed"
METRIC_FILE_ENV = "CLOUD_ML_HP_METRIC_FILE"  # read by hypertune.HyperTune()
MAX_STARTUP_TRIALS = 10


def _optuna() -> Any:
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    return optuna


Param = dict[str, Any]


# -- study spec -> search space ------------------------------------------------------------
def all_parameters(parameters: list[Param]) -> list[Param]:
    """Every parameter spec, conditional children included (depth first)."""
    found = []
    for spec in parameters:
        found.append(spec)
        children = [c["parameterSpec"] for c in spec.get("conditionalParameterSpecs") or []]
        found.extend(all_parameters(children))
    return found


def grid_values(spec: Param, field: str) -> list[Any]:
    if "doubleValueSpec" in spec:
        raise SpecError(
            field,
            f"parameter {spec['parameterId']!r} is a double; GRID_SEARCH needs discrete, "
            "integer or categorical parameters (use discreteValueSpec for a list of doubles)",
        )
    if "integerValueSpec" in spec:
        bounds = spec["integerValueSpec"]
        return list(range(int(bounds["minValue"]), int(bounds["maxValue"]) + 1))
    if "discreteValueSpec" in spec:
        return list(spec["discreteValueSpec"]["values"])
    return list(spec["categoricalValueSpec"]["values"])


def make_sampler(study: Param, seed: int, max_trials: int) -> optuna.samplers.BaseSampler:
    optuna = _optuna()
    algorithm = study.get("algorithm", "ALGORITHM_UNSPECIFIED")
    if algorithm == "RANDOM_SEARCH":
        return optuna.samplers.RandomSampler(seed=seed)
    if algorithm == "GRID_SEARCH":  # the grid points are enqueued (see grid_points)
        return optuna.samplers.RandomSampler(seed=seed)
    return optuna.samplers.TPESampler(seed=seed, n_startup_trials=startup_trials(max_trials))


def grid_points(study: Param, seed: int) -> list[dict[str, Any]]:
    """Every combination of the grid, in a seeded order. Optuna's GridSampler stops the study
    from a callback, which an ask/tell loop cannot take, so the points are enqueued instead."""
    space = {
        spec["parameterId"]: grid_values(spec, "studySpec.parameters")
        for spec in all_parameters(study["parameters"])
    }
    points = [dict(zip(space, combo, strict=True)) for combo in itertools.product(*space.values())]
    random.Random(seed).shuffle(points)
    return points


def startup_trials(max_trial_count: int) -> int:
    """TPE's random warm-up: a quarter of the budget (2..10), so small budgets still search."""
    return max(2, min(MAX_STARTUP_TRIALS, max_trial_count // 4))


def suggest(trial: optuna.Trial, specs: list[Param], grid: bool, values: dict[str, Any]) -> None:
    """Draws each parameter (and the children whose parent value matches) into `values`."""
    for spec in specs:
        value = suggest_one(trial, spec, grid)
        values[spec["parameterId"]] = value
        for child in spec.get("conditionalParameterSpecs") or []:
            if parent_matches(child, value):
                suggest(trial, [child["parameterSpec"]], grid, values)


def suggest_one(trial: optuna.Trial, spec: Param, grid: bool) -> Any:
    name = spec["parameterId"]
    if grid:
        return trial.suggest_categorical(name, grid_values(spec, name))
    scale = spec.get("scaleType", "UNIT_LINEAR_SCALE")
    log = scale in ("UNIT_LOG_SCALE", "UNIT_REVERSE_LOG_SCALE")
    if "doubleValueSpec" in spec:
        low, high = (float(spec["doubleValueSpec"][k]) for k in ("minValue", "maxValue"))
        value = trial.suggest_float(name, low, high, log=log)
        # Reverse-log: dense near maxValue; sample log-scaled and reflect within the range.
        return low + high - value if scale == "UNIT_REVERSE_LOG_SCALE" else value
    if "integerValueSpec" in spec:
        low, high = (int(spec["integerValueSpec"][k]) for k in ("minValue", "maxValue"))
        value = trial.suggest_int(name, low, high, log=log)
        return low + high - value if scale == "UNIT_REVERSE_LOG_SCALE" else value
    if "discreteValueSpec" in spec:
        return trial.suggest_categorical(name, list(spec["discreteValueSpec"]["values"]))
    return trial.suggest_categorical(name, list(spec["categoricalValueSpec"]["values"]))


def parent_matches(child: Param, parent_value: Any) -> bool:
    for key in ("parentDiscreteValues", "parentIntValues", "parentCategoricalValues"):
        if key in child:
            allowed = child[key].get("values") or []
            if key == "parentIntValues":
                return int(parent_value) in {int(v) for v in allowed}
            return parent_value in allowed
    return True


def format_arg(value: Any) -> str:
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return str(value)


# -- metrics --------------------------------------------------------------------------------
def read_measurement(path: Path, metrics: list[Param], selection: str) -> Param | None:
    """The trial's final measurement from cloudml-hypertune's JSON lines, or None."""
    if not path.exists():
        return None
    ids = [m["metricId"] for m in metrics]
    reports = []
    for line in path.read_text().splitlines():
        with_suppressed = _parse_line(line)
        if with_suppressed and all(i in with_suppressed for i in ids):
            reports.append(with_suppressed)
    if not reports:
        return None
    chosen = reports[-1]
    if selection == "BEST_MEASUREMENT":
        sign = 1.0 if metrics[0]["goal"] == "MAXIMIZE" else -1.0
        chosen = max(reports, key=lambda r: sign * float(r[ids[0]]))
    return {
        "stepCount": str(int(chosen.get("global_step") or 0)),
        "metrics": [{"metricId": i, "value": float(chosen[i])} for i in ids],
    }


def _parse_line(line: str) -> dict[str, Any] | None:
    try:
        parsed = json.loads(line)
    except json.JSONDecodeError:
        return None
    return parsed if isinstance(parsed, dict) else None


# -- the tuning job ---------------------------------------------------------------------------
@dataclass(frozen=True)
class AskedTrial:
    """A trial the optimiser has suggested values for, before it runs."""

    optuna_trial: optuna.Trial
    trial_id: str
    trial_dir: Path
    values: dict[str, Any]


class TuningRun:
    def __init__(self, executor: Executor, job: Param, control: JobControl) -> None:
        self.executor = executor
        self.job = job
        self.name = job["name"]
        self.job_id = self.name.rsplit("/", 1)[1]
        self.control = control
        self.study_spec = protos.with_defaults(aiplatform_v1.StudySpec, job["studySpec"])
        self.trial_spec = job["trialJobSpec"]
        self.dir = executor.root / self.job_id
        self.log = JobLog(self.dir)
        self.max_trials = int(job["maxTrialCount"])
        self.parallel = max(1, int(job.get("parallelTrialCount") or 1))
        self.max_failed = int(job.get("maxFailedTrialCount") or 0)
        self.grid = self.study_spec.get("algorithm") == "GRID_SEARCH"
        self.failures: list[str] = []
        self.successes = 0
        self._lock = threading.Lock()

    def run(self) -> None:
        self.executor.set_state(self.name, states.PENDING)
        try:
            pool_argv = self.executor.prepare_pools(self.trial_spec, self.log)
        except PackageError as exc:
            self.finish(Outcome(states.FAILED, states.CODE_INVALID_ARGUMENT, str(exc)))
            return
        study = self.create_study()
        self.executor.set_state(self.name, states.RUNNING)
        self.run_trials(study, pool_argv)
        self.finish(self.outcome())

    def create_study(self) -> optuna.Study:
        sampler = make_sampler(self.study_spec, self.seed(), self.max_trials)
        study = _optuna().create_study(directions=self.directions(), sampler=sampler)
        if self.grid:  # Vertex stops a grid search when the grid is exhausted
            points = grid_points(self.study_spec, self.seed())
            self.max_trials = min(self.max_trials, len(points))
            for point in points[: self.max_trials]:
                study.enqueue_trial(point)
        return study

    def directions(self) -> list[str]:
        return [
            "maximize" if m["goal"] == "MAXIMIZE" else "minimize"
            for m in self.study_spec["metrics"]
        ]

    def seed(self) -> int:
        label = (self.job.get("labels") or {}).get(SEED_LABEL)
        return int(label) if label and label.isdigit() else int(self.job_id) % 2**32

    def run_trials(self, study: optuna.Study, pool_argv: dict[int, list[str]]) -> None:
        """Trials run in rounds of parallelTrialCount, asked in trial order before a round and
        told in trial order after it. So a seeded study suggests the same values however the
        trial processes happen to be scheduled: a reproducible local study is worth waiting for
        each round's slowest trial (Vertex itself promises no such order)."""
        started = 0
        with ThreadPoolExecutor(max_workers=self.parallel) as pool:
            while started < self.max_trials and self.go_on():
                size = min(self.parallel, self.max_trials - started)
                asked = [self.ask(study, started + i + 1) for i in range(size)]
                started += size
                ran = [pool.submit(self.run_trial, trial, pool_argv) for trial in asked]
                for trial, future in zip(asked, ran, strict=True):
                    outcome, ended = future.result()
                    self.record(study, trial, outcome, ended)

    def go_on(self) -> bool:
        too_many = self.max_failed and len(self.failures) > self.max_failed
        return not self.control.stop.is_set() and not too_many

    def ask(self, study: optuna.Study, number: int) -> AskedTrial:
        optuna_trial = study.ask()
        values: dict[str, Any] = {}
        suggest(optuna_trial, self.study_spec["parameters"], self.grid, values)
        trial = AskedTrial(optuna_trial, str(number), self.dir / f"trial-{number}", values)
        self.update_trial(trial.trial_id, {
            "id": trial.trial_id,
            "state": "ACTIVE",
            "parameters": [{"parameterId": k, "value": v} for k, v in values.items()],
            "startTime": now_rfc3339(),
        })  # fmt: skip
        return trial

    def run_trial(self, trial: AskedTrial, pool_argv: dict[int, list[str]]) -> tuple[Outcome, str]:
        owner = f"{self.name}/trials/{trial.trial_id}"  # each trial holds its own GPUs
        lease = self.executor.gpus.acquire(owner, self.trial_spec, self.control.stop, self.log)
        if lease is None:
            return self.control.outcome(), now_rfc3339()
        plan = self.trial_plan(trial.trial_id, trial.trial_dir, trial.values, pool_argv)
        plan.device_env = lease.env
        try:
            outcome = self.executor.cluster_run(plan, self.trial_spec, self.control, self.log).run()
        finally:
            self.executor.gpus.release(owner)
        return outcome, now_rfc3339()

    def trial_plan(
        self,
        trial_id: str,
        trial_dir: Path,
        values: dict[str, Any],
        pool_argv: dict[int, list[str]],
    ) -> ClusterPlan:
        base = (self.trial_spec.get("baseOutputDirectory") or {}).get("outputUriPrefix")
        return ClusterPlan(
            job_name=self.name,
            job_spec=self.trial_spec,
            pool_argv=pool_argv,
            log_dir=trial_dir,
            base_env=self.executor.base_env(self.dir),
            output_dir=f"{base.rstrip('/')}/{trial_id}" if base else None,
            trial_id=trial_id,
            extra_args=[f"--{k}={format_arg(v)}" for k, v in values.items()],
            trial_env={METRIC_FILE_ENV: str(trial_dir / "hypertune" / "output.metrics")},
        )

    def record(self, study: optuna.Study, trial: AskedTrial, outcome: Outcome, ended: str) -> None:
        optuna_trial, trial_id, trial_dir = trial.optuna_trial, trial.trial_id, trial.trial_dir
        measurement = None
        reason = outcome.message
        if outcome.state == states.SUCCEEDED:
            selection = self.study_spec.get("measurementSelectionType", "LAST_MEASUREMENT")
            path = trial_dir / "hypertune" / "output.metrics"
            measurement = read_measurement(path, self.study_spec["metrics"], selection)
            if measurement is None:
                ids = [m["metricId"] for m in self.study_spec["metrics"]]
                reason = f"the trial reported no value for metric(s) {ids} through hypertune"
        change: Param = {"endTime": ended}
        with self._lock:
            if measurement:
                study.tell(optuna_trial, [m["value"] for m in measurement["metrics"]])
                change.update(state="SUCCEEDED", finalMeasurement=measurement)
                self.successes += 1
            else:
                study.tell(optuna_trial, state=_optuna().trial.TrialState.FAIL)
                change.update(state="INFEASIBLE", infeasibleReason=reason)
                self.failures.append(f"trial {trial_id}: {reason}")
        self.log(f"trial {trial_id} ended {change['state']}")
        self.update_trial(trial_id, change)

    def update_trial(self, trial_id: str, change: Param) -> None:
        def apply(job: Param) -> None:
            trials = job.setdefault("trials", [])
            existing = next((t for t in trials if t["id"] == trial_id), None)
            if existing is None:
                trials.append(change)
            else:
                existing.update(change)
            job["updateTime"] = now_rfc3339()

        self.executor.backend.store.mutate(self.name, apply)

    def outcome(self) -> Outcome:
        if self.control.stop.is_set():
            return self.control.outcome()
        if self.max_failed and len(self.failures) > self.max_failed:
            return Outcome(
                states.FAILED,
                states.CODE_INVALID_ARGUMENT,
                f"{len(self.failures)} trials failed, more than maxFailedTrialCount "
                f"({self.max_failed}). Last failure: {self.failures[-1]}",
            )
        if not self.successes:
            last = self.failures[-1] if self.failures else "no trial ran"
            return Outcome(
                states.FAILED,
                states.CODE_INVALID_ARGUMENT,
                f"All {len(self.failures)} trials failed. Last failure: {last}",
            )
        return Outcome(states.SUCCEEDED)

    def finish(self, outcome: Outcome) -> None:
        self.log(f"job ended {outcome.state}")
        self.executor.finish(self.name, outcome)
