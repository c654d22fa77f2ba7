"""Vertex AI Vizier (`VizierService`): studies and their trials.

Studies: create, get, list, delete, lookup (by displayName). A study's name is a numeric ID
under its location; a second study with the same displayName is ALREADY_EXISTS (what the SDK's
`Study.create_or_load` catches before it looks the study up).

Trials: create (a user-provided trial: REQUESTED, or SUCCEEDED when it carries a
finalMeasurement), get, list, delete, suggest, addTrialMeasurement, complete, stop,
checkTrialEarlyStoppingState, listOptimalTrials. Suggestions come from the optimiser of the
local tuning jobs (`optimizer.py`); trial IDs count 1, 2, ... within the study.

Request fields, each honoured or refused with a 400:
- Study: displayName, studySpec honoured; the output-only name/state/createTime/
  inactiveReason are dropped, as Vertex does. StudySpec parts not run here are refused
  (`validation.UNHONOURED_SPEC_FIELDS`, observationNoise, safetyConfig, studyStoppingConfig
  other than maxNumTrials).
- SuggestTrialsRequest: suggestionCount and clientId honoured; contexts refused.
- Trial (create): parameters, measurements, finalMeasurement honoured; the other output-only
  fields are refused, the service sets them.
- CompleteTrialRequest: all three fields honoured (finalMeasurement is ignored when
  trialInfeasible is true, as the reference says).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from vertexkit.local.errors import bad_request, conflict, failed_precondition, not_found
from vertexkit.local.lifecycle import Lifecycle
from vertexkit.local.vertex import protos
from vertexkit.local.vertex.backend import VertexBackend
from vertexkit.local.vertex.core.area import AreaContext
from vertexkit.local.vertex.core.recipe import Recipe, StandardMethods
from vertexkit.local.vertex.router import VertexRequest
from vertexkit.local.vertex.store import Resource, ResourceStore, now_rfc3339
from vertexkit.local.vertex.studies import optimizer, ranking, validation
from vertexkit.local.vertex.training import early_stopping
from vertexkit.runtime.gapic import aiplatform_v1
from vertexkit.specs.errors import SpecError

LOCATION = "projects/{project}/locations/{location}"
STUDY = f"{LOCATION}/studies/{{study}}"
TRIAL = f"{STUDY}/trials/{{trial}}"
STUDIES, TRIALS = "studies", "studyTrials"  # the store's collections
STUDY_OUTPUT_ONLY = ("name", "state", "createTime", "inactiveReason")
TRIAL_INPUTS = {"parameters", "measurements", "finalMeasurement"}
PENDING = ("REQUESTED", "ACTIVE", "STOPPING")
UNLIMITED = 2**31  # trials a study without maxNumTrials may still get
# The operations' (metadata, response) types; "Metatdata" is Google's spelling.
SUGGEST_TYPES = ("SuggestTrialsMetadata", "SuggestTrialsResponse")
EARLY_STOPPING_TYPES = ("CheckTrialEarlyStoppingStateMetatdata",
                        "CheckTrialEarlyStoppingStateResponse")  # fmt: skip
# Vizier's lists take only paging, and its deletes answer Empty.
STUDY_RECIPE = Recipe(
    STUDIES, "Study", aiplatform_v1.Study, None, None, "studies", validation.validate_study,
    methods=("create", "list", "get", "delete"), children=(TRIALS,),
    output_only=STUDY_OUTPUT_ONLY, filterable=False, regional=True, delete_operation=False,
)  # fmt: skip
# A trial's output-only fields are refused, not dropped (`Trials.check`).
TRIAL_RECIPE = Recipe(
    TRIALS, "Trial", aiplatform_v1.Trial, None, None, "trials", lambda body: None,
    methods=("create", "list", "get", "delete"), output_only=(), filterable=False,
    parent_kind="Study", delete_operation=False,
)  # fmt: skip




def parsed(message: type, body: Resource) -> Resource:
    return protos.to_dict(protos.parse(message, body))


class Studies(StandardMethods):
    """A second study with the same displayName is ALREADY_EXISTS; a new one is ACTIVE."""

    def __init__(self, backend: VertexBackend) -> None:
        super().__init__(backend, STUDY_RECIPE)

    def check(self, request: VertexRequest, body: Resource) -> None:
        validation.validate_study(body)
        if find_study(self.store, request.parent, body["displayName"]):
            raise conflict(f'Study with displayName "{body["displayName"]}" already exists.')

    def build(self, name: str, body: Resource) -> Resource:
        return {"name": name, **body, "state": "ACTIVE", "createTime": now_rfc3339()}


class Trials(StandardMethods):
    """A user's trial: REQUESTED, or SUCCEEDED with a finalMeasurement; IDs count 1, 2, ...
    within the study, under the area's lock (suggestions add trials too)."""

    def __init__(self, backend: VertexBackend, lock: threading.Lock) -> None:
        super().__init__(backend, TRIAL_RECIPE)
        self.lock = lock

    def create(self, request: VertexRequest) -> Resource:
        with self.lock:
            return super().create(request)

    def check(self, request: VertexRequest, body: Resource) -> None:
        study = self.store.get(request.path.rsplit("/trials", 1)[0], kind="Study")
        refused = sorted(set(body) - TRIAL_INPUTS)
        if refused:
            raise bad_request(f"{refused[0]}: output only; the service sets it (allowed: "
                              f"{', '.join(sorted(TRIAL_INPUTS))})")  # fmt: skip
        spec = study_spec(study)
        validation.check_parameters(spec, body.get("parameters") or [])
        if "finalMeasurement" in body:
            validation.check_final_measurement(spec, body["finalMeasurement"])

    def new_id(self, request: VertexRequest) -> str:
        study = self.store.get(request.path.rsplit("/trials", 1)[0], kind="Study")
        return str(self.store.next_counter(f"{study['name']}/trials"))

    def build(self, name: str, body: Resource) -> Resource:
        return new_trial(name, body, final="finalMeasurement" in body)

    def items(self, request: VertexRequest) -> list[Resource]:
        study = self.store.get(request.path.rsplit("/trials", 1)[0], kind="Study")
        return self.store.list(TRIALS, study["name"])


def new_trial(name: str, body: Resource, *, final: bool) -> Resource:
    now = now_rfc3339()
    trial = {"name": name, "id": name.rsplit("/", 1)[1], **body, "startTime": now}
    trial["state"] = "SUCCEEDED" if final else body.pop("state", "REQUESTED")
    if final:
        trial["endTime"] = now
    return trial


def find_study(store: ResourceStore, location: str, display_name: str) -> Resource | None:
    found = [s for s in store.list(STUDIES, location) if s["displayName"] == display_name]
    return found[0] if found else None


class StudiesArea(Lifecycle):
    def __init__(self, backend: VertexBackend) -> None:
        self.backend = backend
        self.store = backend.store
        # Suggestions read the trials and then add to them: one at a time, so two clients
        # never get the same REQUESTED trial or the same new trial ID.
        self.lock = threading.Lock()

    def lookup_study(self, request: VertexRequest) -> Resource:
        body = parsed(aiplatform_v1.LookupStudyRequest, request.body)
        if not body.get("displayName"):
            raise bad_request("displayName: required: the display name of the study to find")
        study = find_study(self.store, request.parent, body["displayName"])
        if study is None:
            raise not_found(f'Study with displayName "{body["displayName"]}" not found.')
        return study

    def insert_trial(self, study: Resource, body: Resource, *, final: bool) -> Resource:
        trial_id = str(self.store.next_counter(f"{study['name']}/trials"))
        name = f"{study['name']}/trials/{trial_id}"
        return self.store.insert(TRIALS, name, new_trial(name, body, final=final))

    def get_study_of(self, trials_path: str) -> Resource:
        return self.store.get(trials_path.rsplit("/trials", 1)[0], kind="Study")

    # -- suggest ----------------------------------------------------------------------------------
    def suggest_trials(self, request: VertexRequest) -> Resource:
        """The client's ACTIVE trials first (the reference: the same trial again while it is
        pending), then REQUESTED trials, then new ones from the optimiser, up to
        suggestionCount. No new trial once the study is COMPLETED (grid exhausted, or
        studyStoppingConfig.maxNumTrials reached)."""
        study = self.get_study_of(request.path)
        body = suggest_request(request.body)
        started = now_rfc3339()
        with self.lock:
            trials = self.store.list(TRIALS, study["name"])
            chosen = self.suggestions(study, trials, body["clientId"], body["suggestionCount"])
            state = self.update_study_state(study)
        response = {"trials": chosen, "studyState": state, "startTime": started}
        metadata = {"clientId": body["clientId"]}
        response["endTime"] = now_rfc3339()
        return self.done_operation(study["name"], SUGGEST_TYPES, metadata, response)

    def suggestions(
        self, study: Resource, trials: list[Resource], client: str, count: int
    ) -> list[Resource]:
        chosen = [t for t in trials if t["state"] == "ACTIVE" and t.get("clientId") == client]
        chosen = chosen[:count]
        for trial in [t for t in trials if t["state"] == "REQUESTED"][: count - len(chosen)]:
            chosen.append(self.assign(trial, client))
        wanted = min(count - len(chosen), self.trials_left(study, trials))
        if wanted > 0:
            spec, seed = study_spec(study), study_seed(study)
            for values in optimizer.suggest_values(spec, trials, seed, wanted):
                chosen.append(self.new_trial(study, values, client))
        return chosen

    def assign(self, trial: Resource, client: str) -> Resource:
        def change(stored: Resource) -> None:
            stored.update(state="ACTIVE", clientId=client, startTime=now_rfc3339())

        return self.store.mutate(trial["name"], change, "Trial")

    def new_trial(self, study: Resource, values: dict[str, Any], client: str) -> Resource:
        parameters = [{"parameterId": k, "value": v} for k, v in values.items()]
        body = {"parameters": parameters, "state": "ACTIVE", "clientId": client}
        return self.insert_trial(study, body, final=False)

    def trials_left(self, study: Resource, trials: list[Resource]) -> int:
        """What studyStoppingConfig.maxNumTrials leaves; without it, no limit."""
        budget = (study["studySpec"].get("studyStoppingConfig") or {}).get("maxNumTrials")
        return int(budget) - len(trials) if budget else UNLIMITED

    def update_study_state(self, study: Resource) -> str:
        """COMPLETED once the budget is spent or the grid has no untried point left."""
        trials = self.store.list(TRIALS, study["name"])
        spec = study_spec(study)
        exhausted = self.trials_left(study, trials) <= 0 or (
            spec.get("algorithm") == "GRID_SEARCH"
            and not optimizer.untried_grid_points(spec, trials, study_seed(study))
        )
        if exhausted and study["state"] == "ACTIVE":
            self.store.mutate(study["name"], lambda s: s.update(state="COMPLETED"), "Study")
            return "COMPLETED"
        return study["state"]

    def done_operation(
        self, parent: str, types: tuple[str, str], metadata: Resource, response: Resource
    ) -> Resource:
        """A finished operation whose metadata carries `metadata` beside genericMetadata."""
        operations = self.backend.operations
        operation = operations.start(parent, *types)
        self.store.mutate(operation["name"], lambda op: op["metadata"].update(metadata))
        return operations.finish(operation["name"], response)

    # -- a trial's progress -----------------------------------------------------------------------
    def add_measurement(self, request: VertexRequest) -> Resource:
        body = parsed(aiplatform_v1.AddTrialMeasurementRequest, request.body)
        if "measurement" not in body:
            raise bad_request("measurement: required: the measurement to add to the trial")
        name = request.path.rsplit(":", 1)[0]
        return self.change_pending(
            name, lambda t: t.setdefault("measurements", []).append(body["measurement"])
        )

    def change_pending(self, name: str, change: Callable[[Resource], None]) -> Resource:
        """Applies `change` to a trial that is not yet SUCCEEDED or INFEASIBLE."""
        with self.lock:
            trial = self.store.get(name, kind="Trial")
            if trial["state"] not in PENDING:
                raise failed_precondition(f'Trial "{name}" is already {trial["state"]}.')
            return self.store.mutate(name, change, "Trial")

    def complete_trial(self, request: VertexRequest) -> Resource:
        body = parsed(aiplatform_v1.CompleteTrialRequest, request.body)
        if body.get("infeasibleReason") and not body.get("trialInfeasible"):
            raise bad_request("infeasibleReason: only with trialInfeasible: true")
        name = request.path.rsplit(":", 1)[0]
        spec = study_spec(self.get_study_of(name))
        if "finalMeasurement" in body and not body.get("trialInfeasible"):
            validation.check_final_measurement(spec, body["finalMeasurement"])
        return self.change_pending(name, lambda trial: complete(spec, trial, body))

    def stop_trial(self, request: VertexRequest) -> Resource:
        parsed(aiplatform_v1.StopTrialRequest, request.body)
        name = request.path.rsplit(":", 1)[0]
        return self.change_pending(name, lambda trial: trial.update(state="STOPPING"))

    def check_early_stopping(self, request: VertexRequest) -> Resource:
        """shouldStop from the study spec's medianAutomatedStoppingSpec (`early_stopping.
        median_rule_stops`, shared with tuning jobs); a study without a stopping spec never
        stops a trial early, so the answer is false. A trial told to stop becomes STOPPING;
        one already STOPPING is told to stop again."""
        parsed(aiplatform_v1.CheckTrialEarlyStoppingStateRequest, request.body)
        name = request.path.rsplit(":", 1)[0]
        study = self.get_study_of(name)
        trial = self.store.get(name, kind="Trial")
        stop = trial["state"] == "STOPPING" or self.median_stops(study, trial)
        if stop and trial["state"] == "ACTIVE":
            self.change_pending(name, lambda t: t.update(state="STOPPING"))
        metadata = {"study": study["name"], "trial": name}
        response = {"shouldStop": True} if stop else {}  # proto3 JSON omits a false bool
        return self.done_operation(name, EARLY_STOPPING_TYPES, metadata, response)

    def median_stops(self, study: Resource, trial: Resource) -> bool:
        spec = study_spec(study)
        if "medianAutomatedStoppingSpec" not in spec or trial["state"] not in PENDING:
            return False
        others = self.store.list(TRIALS, study["name"])
        completed = [t.get("measurements") or [] for t in others if ranking.succeeded(t)]
        return early_stopping.median_rule_stops(spec, trial.get("measurements") or [], completed)

    def list_optimal_trials(self, request: VertexRequest) -> Resource:
        parsed(aiplatform_v1.ListOptimalTrialsRequest, request.body)
        study = self.get_study_of(request.path.rsplit(":", 1)[0])
        trials = self.store.list(TRIALS, study["name"])
        optimal = ranking.optimal_trials(study_spec(study), trials)
        return {"optimalTrials": optimal} if optimal else {}


def suggest_request(body: Resource) -> Resource:
    request = parsed(aiplatform_v1.SuggestTrialsRequest, body)
    if int(request.get("suggestionCount") or 0) < 1:
        raise SpecError("suggestionCount", "required: a positive number of trials")
    if not request.get("clientId"):
        raise SpecError("clientId", "required: the identifier of the requesting client")
    if request.get("contexts"):
        raise SpecError("contexts", "contextual suggestions are not made locally; leave it empty")
    return {"clientId": request["clientId"], "suggestionCount": int(request["suggestionCount"])}


def complete(spec: Resource, trial: Resource, body: Resource) -> None:
    """A trial without a final measurement is INFEASIBLE: the Trial.State reference says the
    service sets INFEASIBLE "when it's done but missing the final_measurement"."""
    trial["endTime"] = now_rfc3339()
    final = None
    if not body.get("trialInfeasible"):
        final = body.get("finalMeasurement") or ranking.select_measurement(
            spec, trial.get("measurements") or []
        )
    if final is not None:
        trial.update(state="SUCCEEDED", finalMeasurement=final)
        return
    reason = body.get("infeasibleReason") or (
        "" if body.get("trialInfeasible") else "no measurement reports every study metric"
    )
    trial["state"] = "INFEASIBLE"
    if reason:
        trial["infeasibleReason"] = reason


def study_spec(study: Resource) -> Resource:
    return protos.with_defaults(aiplatform_v1.StudySpec, study["studySpec"])


def study_seed(study: Resource) -> int:
    return int(study["name"].rsplit("/", 1)[1]) % 2**32


def register(context: AreaContext) -> StudiesArea:
    router, backend = context.router, context.backend
    area = StudiesArea(backend)
    Studies(backend).register(router, f"{LOCATION}/studies")
    router.route("POST", f"{LOCATION}/studies:lookup")(area.lookup_study)
    trials = f"{STUDY}/trials"
    Trials(backend, area.lock).register(router, trials)
    router.route("POST", f"{trials}:suggest")(area.suggest_trials)
    router.route("POST", f"{trials}:listOptimalTrials")(area.list_optimal_trials)
    router.route("POST", f"{TRIAL}:addTrialMeasurement")(area.add_measurement)
    router.route("POST", f"{TRIAL}:complete")(area.complete_trial)
    router.route("POST", f"{TRIAL}:stop")(area.stop_trial)
    router.route("POST", f"{TRIAL}:checkTrialEarlyStoppingState")(area.check_early_stopping)
    return area
