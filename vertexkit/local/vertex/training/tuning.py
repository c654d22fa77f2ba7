"""Hyperparameter tuning jobs: a Vertex study spec driven by an Optuna study.

Algorithms: the default (Vertex's Bayesian search) -> TPE, RANDOM_SEARCH -> random sampling,
GRID_SEARCH -> Optuna's grid over discrete, categorical and integer values. Samplers are seeded:
from the job label `vertexkit-seed` when present (a local-only convenience for reproducible
runs), else from the job ID. Each trial runs the trial job spec's worker pools with
`--name=value` appended and reports through cloudml-hypertune, whose metric file
(`CLOUD_ML_HP_METRIC_FILE`) is private to the trial.

Stopping. Each hypertune report is an intermediate measurement (its `global_step` the step
count, its timestamp less the trial's start the elapsed duration); a watcher reads them while
the trial runs and, under medianAutomatedStoppingSpec or decayCurveStoppingSpec
(`early_stopping`), ends the trial's processes. Vertex documents no separate state for a trial
its service stopped early, so such a trial ends SUCCEEDED with the measurement that
measurementSelectionType picks from what it reported as finalMeasurement (INFEASIBLE if it
reported nothing), and the job log says why it stopped. studyStoppingConfig is checked, rule by
rule in the reference's order, before each new trial is asked for; with shouldStopAsap the
time rules also end trials in flight. convexAutomatedStoppingSpec and observationNoise are
refused (`refuse_unhonoured`) before the job is created.
"""

from __future__ import annotations

import itertools
import json
import random
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vertexkit.local.vertex import protos
from vertexkit.local.vertex.jobs import states
from vertexkit.local.vertex.jobs.lifecycle import JobControl, JobLog, Outcome
from vertexkit.local.vertex.store import now_rfc3339
from vertexkit.local.vertex.training import early_stopping
from vertexkit.local.vertex.training.execution import Executor, parse_duration
from vertexkit.local.vertex.training.packages import PackageError
from vertexkit.local.vertex.training.runner import ClusterPlan
from vertexkit.runtime.gapic import aiplatform_v1
from vertexkit.specs import SpecError

if TYPE_CHECKING:  # Optuna (0.2 s to import) loads when a tuning job starts: `_optuna()`
    import optuna

SEED_LABEL = "vertexkit-seed"
METRIC_FILE_ENV = "CLOUD_ML_HP_METRIC_FILE"  # read by hypertune.HyperTune()
MAX_STARTUP_TRIALS = 10
WATCH_SECONDS = 0.05  # how often a running trial's reports are read for early stopping


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


# -- fields the local tuning engine does not carry out: refused before the job exists ---------
def refuse_unhonoured(spec: Param, path: str = "studySpec") -> None:
    for index, metric in enumerate(spec.get("metrics") or []):
        if metric.get("safetyConfig"):  # as a Study refuses it (studies/validation.py)
            raise SpecError(
                f"{path}.metrics[{index}].safetyConfig",
                "safety metrics are not run locally: the local optimiser does not hold a "
                "trial's parameters back for a safety threshold; leave it unset",
            )
    if "convexAutomatedStoppingSpec" in spec:
        raise SpecError(
            f"{path}.convexAutomatedStoppingSpec",
            "the convex autoregressive stopping rule is not run locally; use "
            "medianAutomatedStoppingSpec or decayCurveStoppingSpec",
        )
    if spec.get("observationNoise", "OBSERVATION_NOISE_UNSPECIFIED") != (
        "OBSERVATION_NOISE_UNSPECIFIED"
    ):
        raise SpecError(
            f"{path}.observationNoise",
            "the local optimiser (Optuna's samplers) has no noise model; leave it unset",
        )
    config = spec.get("studyStoppingConfig") or {}
    for key in ("maxNumTrialsNoProgress", "maxDurationNoProgress"):
        if key in config and len(spec.get("metrics") or []) > 1:
            raise SpecError(
                f"{path}.studyStoppingConfig.{key}",
                "effective only for single-objective studies (as its reference warns); "
                "this study has several metrics",
            )


# -- metrics --------------------------------------------------------------------------------
def read_curve(path: Path, metrics: list[Param], started: float) -> list[Param]:
    """The trial's measurements so far, from cloudml-hypertune's JSON lines: the reports that
    carry every study metric, elapsedDuration counted from `started` (a time.time())."""
    ids = [m["metricId"] for m in metrics]
    try:
        lines = path.read_text().splitlines()
    except FileNotFoundError:
        return []
    curve = []
    for line in lines:  # hypertune rewrites the file per report: a torn line is skipped
        report = _parse_line(line)
        if report and all(i in report for i in ids):
            curve.append(as_measurement(report, ids, started))
    return curve


def as_measurement(report: Param, ids: list[str], started: float) -> Param:
    since = max(0.0, float(report.get("timestamp") or started) - started)
    return {
        "elapsedDuration": f"{since:.3f}s",
        "stepCount": str(int(report.get("global_step") or 0)),
        "metrics": [{"metricId": i, "value": float(report[i])} for i in ids],
    }


def final_measurement(curve: list[Param], metrics: list[Param], selection: str) -> Param | None:
    """The measurement measurementSelectionType picks (LAST_MEASUREMENT unless BEST)."""
    if not curve:
        return None
    if selection != "BEST_MEASUREMENT":
        return curve[-1]
    sign = 1.0 if metrics[0]["goal"] == "MAXIMIZE" else -1.0
    return max(curve, key=lambda m: sign * m["metrics"][0]["value"])


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

    @property
    def metric_file(self) -> Path:
        return self.trial_dir / "hypertune" / "output.metrics"


@dataclass
class TrialControl(JobControl):
    """One trial's stop switch: set when the job stops (the job's outcome) or when a stopping
    rule ends the trial (`early`: why; the trial then ends SUCCEEDED)."""

    job: JobControl = field(default_factory=JobControl)
    early: str = ""

    def outcome(self) -> Outcome:
        return Outcome(states.SUCCEEDED, message=self.early) if self.early else self.job.outcome()


def passed(constraint: Param, since_start: float) -> bool:
    """A StudyTimeConstraint: maxDuration since the study began, or a wall-clock endTime."""
    if "endTime" in constraint:
        end = datetime.fromisoformat(constraint["endTime"].replace("Z", "+00:00"))
        return time.time() >= end.timestamp()
    return since_start >= (parse_duration(constraint.get("maxDuration")) or 0.0)


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
        self.stopping = self.study_spec.get("studyStoppingConfig") or {}
        self.started_at = time.time()
        self.started = 0  # trials asked for
        self.curves: list[list[Param]] = []  # trials that ran to their end: the rules' yardstick
        self.trial_starts: dict[str, float] = {}
        self.best: float | None = None  # signed objective, for the no-progress rules
        self.no_progress = 0
        self.last_progress = self.started_at
        self.study_stopped = ""

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
        with ThreadPoolExecutor(max_workers=self.parallel) as pool:
            while self.started < self.max_trials and self.go_on():
                asked = []
                while len(asked) < self.parallel and self.may_ask():
                    self.started += 1
                    asked.append(self.ask(study, self.started))
                if not asked:
                    return
                ran = [pool.submit(self.run_trial, trial, pool_argv) for trial in asked]
                for trial, future in zip(asked, ran, strict=True):
                    outcome, ended = future.result()
                    self.record(study, trial, outcome, ended)

    def may_ask(self) -> bool:
        if self.started >= self.max_trials or not self.go_on():
            return False
        reason = self.study_stop_reason(asking=True)
        if reason and not self.study_stopped:
            self.study_stopped = reason
            self.log(f"study stopped after {self.started} trials: {reason}")
        return not reason

    def study_stop_reason(self, asking: bool) -> str:
        """studyStoppingConfig's rules, top to bottom, the first applicable one deciding (as
        its reference says): "" to go on. `asking`: a new trial would be added."""
        config, since = self.stopping, time.time() - self.started_at
        where = "studyStoppingConfig"
        if "minimumRuntimeConstraint" in config and not passed(
            config["minimumRuntimeConstraint"], since
        ):
            return ""
        if "maximumRuntimeConstraint" in config and passed(
            config["maximumRuntimeConstraint"], since
        ):
            return f"{where}.maximumRuntimeConstraint passed"
        ended = self.successes + len(self.failures)
        if "minNumTrials" in config and ended < int(config["minNumTrials"]):
            return ""
        if "maxNumTrials" in config and self.started + asking > int(config["maxNumTrials"]):
            return f"{where}.maxNumTrials ({config['maxNumTrials']}) reached"
        limit = config.get("maxNumTrialsNoProgress")
        if limit is not None and self.no_progress >= int(limit):
            return f"{where}.maxNumTrialsNoProgress: no better objective in {limit} trials"
        quiet = parse_duration(config.get("maxDurationNoProgress"))
        if quiet and time.time() - self.last_progress >= quiet:
            return f"{where}.maxDurationNoProgress: no better objective in {quiet:g}s"
        return ""

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
        control = TrialControl(job=self.control)
        self.trial_starts[trial.trial_id] = time.time()
        done = threading.Event()
        watcher = threading.Thread(target=self.watch, args=(trial, control, done), daemon=True)
        watcher.start()
        try:
            outcome = self.executor.cluster_run(plan, self.trial_spec, control, self.log).run()
        finally:
            done.set()
            watcher.join()
            self.executor.gpus.release(owner)
        return outcome, now_rfc3339()

    def watch(self, trial: AskedTrial, control: TrialControl, done: threading.Event) -> None:
        """Until the trial ends: pass a job stop on, or stop the trial when a rule says so."""
        while not done.wait(WATCH_SECONDS):
            if self.control.stop.is_set():
                control.stop.set()
                return
            reason = self.trial_stop_reason(trial)
            if reason:
                control.early = reason
                self.log(f"trial {trial.trial_id} stopped early: {reason}")
                control.stop.set()
                return

    def trial_stop_reason(self, trial: AskedTrial) -> str:
        if self.stopping.get("shouldStopAsap"):
            reason = self.study_stop_reason(asking=False)
            if reason:
                return f"studyStoppingConfig.shouldStopAsap: the study stopped ({reason})"
        curve = self.curve(trial)
        with self._lock:
            completed = list(self.curves)
        rule = early_stopping.should_stop(self.study_spec, curve, completed)
        if not rule:
            return ""
        metric = self.study_spec["metrics"][0]["metricId"]
        return (
            f"studySpec.{rule}: its {metric} curve up to step {curve[-1]['stepCount']} "
            f"(elapsed {curve[-1]['elapsedDuration']}) loses to the {len(completed)} trials "
            "that ran to their end"
        )

    def curve(self, trial: AskedTrial) -> list[Param]:
        started = self.trial_starts.get(trial.trial_id, self.started_at)
        return read_curve(trial.metric_file, self.study_spec["metrics"], started)

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
        optuna_trial, trial_id = trial.optuna_trial, trial.trial_id
        measurement = None
        reason = outcome.message
        curve = self.curve(trial)
        if outcome.state == states.SUCCEEDED:
            selection = self.study_spec.get("measurementSelectionType", "LAST_MEASUREMENT")
            measurement = final_measurement(curve, self.study_spec["metrics"], selection)
            if measurement is None:
                ids = [m["metricId"] for m in self.study_spec["metrics"]]
                reason = f"the trial reported no value for metric(s) {ids} through hypertune"
        change: Param = {"endTime": ended}
        if curve:
            change["measurements"] = curve
        with self._lock:
            self.note_progress(measurement)
            if measurement:
                study.tell(optuna_trial, [m["value"] for m in measurement["metrics"]])
                change.update(state="SUCCEEDED", finalMeasurement=measurement)
                self.successes += 1
                if not outcome.message:  # ran to its end, not stopped early
                    self.curves.append(curve)
            else:
                study.tell(optuna_trial, state=_optuna().trial.TrialState.FAIL)
                change.update(state="INFEASIBLE", infeasibleReason=reason)
                self.failures.append(f"trial {trial_id}: {reason}")
        self.log(f"trial {trial_id} ended {change['state']}")
        self.update_trial(trial_id, change)

    def note_progress(self, measurement: Param | None) -> None:
        """For maxNumTrialsNoProgress and maxDurationNoProgress (single-objective only)."""
        values = early_stopping.signed(self.study_spec, measurement) if measurement else None
        if values and (self.best is None or values[0] > self.best):
            self.best, self.no_progress, self.last_progress = values[0], 0, time.time()
        else:
            self.no_progress += 1

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
