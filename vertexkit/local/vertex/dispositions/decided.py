# ruff: noqa: E501  (one line per field keeps the table readable)
"""Dispositions decided by the areas' own code, laid over the grep-built table (`table.py`).

The job-spec entries come from the training area's one table (`training/dispositions.py`:
what is refused and what is said in the job log), so a field moved there moves here. The
tuning, serving and batch-explanation entries name the code that decides them.
"""

from __future__ import annotations

from vertexkit.local.vertex.core import fields as core_fields
from vertexkit.local.vertex.core.recipe import camel_to_snake
from vertexkit.local.vertex.dispositions.model import (
    PACKAGE,
    Disposition,
    honoured,
    no_local_effect,
    refused,
)
from vertexkit.local.vertex.registry import dispositions as registry_fields
from vertexkit.local.vertex.training import dispositions as job_fields

STOPPING = "training/tuning.py and training/early_stopping.py on the trials' measurements"
CONVEX = "refused (specs/study.py): the autoregressive convex rule is not run locally"
PROBE = "run against the local server process (registry/serving.py), Kubernetes timing"
ONE_SERVER = "noted in the deploy operation (no autoscaling: minReplicaCount servers run, never more)"

# fmt: off
OWN: dict[tuple[str, str], Disposition] = {
    ("StudySpec", "decay_curve_stopping_spec"): honoured(f"an approximation of the decay-curve rule, {STOPPING}"),
    ("StudySpec.DecayCurveAutomatedStoppingSpec", "use_elapsed_duration"): honoured(f"elapsed time instead of steps, {STOPPING}"),
    ("StudySpec", "median_automated_stopping_spec"): honoured(f"the median rule, {STOPPING}"),
    ("StudySpec.MedianAutomatedStoppingSpec", "use_elapsed_duration"): honoured(f"elapsed time instead of steps, {STOPPING}"),
    ("StudySpec", "convex_automated_stopping_spec"): refused(CONVEX),
    **{("StudySpec.ConvexAutomatedStoppingSpec", field): refused(CONVEX) for field in (
        "max_step_count", "min_step_count", "min_measurement_count",
        "learning_rate_parameter_name", "use_elapsed_duration", "update_all_stopped_trials")},
    ("StudySpec", "observation_noise"): refused("refused when set (specs/study.py): Optuna has no noise model"),
    ("StudySpec", "study_stopping_config"): honoured("checked before each new trial (training/tuning.py)"),
    **{("StudySpec.StudyStoppingConfig", field): honoured("checked before each new trial (training/tuning.py)")
       for field in ("should_stop_asap", "minimum_runtime_constraint", "maximum_runtime_constraint",
                     "min_num_trials", "max_num_trials", "max_num_trials_no_progress",
                     "max_duration_no_progress")},
    ("ModelContainerSpec", "ports"): honoured("AIP_HTTP_PORT is ports[0] when free on 127.0.0.1, else the deploy fails (registry/serving.py)"),
    ("ModelContainerSpec", "startup_probe"): honoured(f"a failing one fails the deploy; {PROBE}"),
    ("ModelContainerSpec", "health_probe"): honoured(f"checked at deploy, then every periodSeconds: failureThreshold failures make predictions 503 UNAVAILABLE until it passes (serving.py _watch_health); {PROBE}"),
    ("DedicatedResources", "min_replica_count"): honoured("a custom container runs that many servers, each prediction to the next ready one (registry/endpoints.py replica_count, serving.py ReplicaSet); a prebuilt model is one model process, noted in the deploy operation"),
    ("ModelContainerSpec", "liveness_probe"): no_local_effect("noted in the deploy operation: not re-run after deploy"),
    ("ModelContainerSpec", "shared_memory_size_mb"): no_local_effect("noted in the deploy operation: a local process has the machine's shared memory"),
    ("ModelContainerSpec", "deployment_timeout"): honoured("the deploy fails after it (registry/endpoints.py)"),
    ("ModelContainerSpec", "grpc_ports"): refused("local model servers speak HTTP only (specs/serving.py)"),
    ("ModelContainerSpec", "invoke_route_prefix"): refused("no invoke routes locally (specs/serving.py)"),
    **{("Probe", field): honoured(PROBE) for field in (
        "exec_", "http_get", "tcp_socket", "period_seconds", "timeout_seconds",
        "failure_threshold", "success_threshold", "initial_delay_seconds")},
    ("Probe", "grpc"): refused("a gRPC probe is not run locally (specs/serving.py)"),
    **{(message, field): honoured(PROBE) for message, field in (
        ("Probe.ExecAction", "command"), ("Probe.HttpGetAction", "path"),
        ("Probe.HttpGetAction", "port"), ("Probe.HttpGetAction", "scheme"),
        ("Probe.HttpGetAction", "http_headers"), ("Probe.HttpHeader", "name"),
        ("Probe.HttpHeader", "value"), ("Probe.TcpSocketAction", "port"))},
    ("Probe.HttpGetAction", "host"): honoured("localhost only; another host is refused (specs/serving.py)"),
    ("Probe.TcpSocketAction", "host"): honoured("localhost only; another host is refused (specs/serving.py)"),
    ("Probe.GrpcAction", "port"): refused("a gRPC probe is not run locally (specs/serving.py)"),
    ("Probe.GrpcAction", "service"): refused("a gRPC probe is not run locally (specs/serving.py)"),
    ("DedicatedResources", "max_replica_count"): no_local_effect(ONE_SERVER),
    ("DedicatedResources", "autoscaling_metric_specs"): no_local_effect(ONE_SERVER),
    ("DedicatedResources", "required_replica_count"): no_local_effect(ONE_SERVER),
    ("DedicatedResources", "spot"): no_local_effect(ONE_SERVER),
    # A field inside one the job code refuses or notes as a whole (training/dispositions.py).
    **{("NfsMount", f): refused("its nfsMounts is refused: no share is mounted here") for f in ("server", "path", "mount_point")},
    **{("LustreMount", f): refused("its lustreMounts is refused: no share is mounted here") for f in ("instance_ip", "volume_handle", "filesystem", "mount_point")},
    ("CustomJobSpec", "tensorboard"): honoured("must exist, in the job's region, with a serviceAccount (specs/worker_pools.py); its event files are listed under it (tensorboards/routes.py)"),
    ("CustomJobSpec", "experiment"): honoured("must exist, a system.Experiment context (training/dispositions.py)"),
    ("CustomJobSpec", "experiment_run"): honoured("must exist, a child of the experiment; the job is recorded on the run (training/dispositions.py)"),
    ("BatchPredictionJob", "generate_explanation"): honoured("sampled Shapley per result line (batch_prediction/run.py, registry/explain.py)"),
    ("BatchPredictionJob", "explanation_spec"): honoured("merged over the model's (registry/explain.py merged_spec)"),
}
NOTED_JOB = "noted once in the job log (training/dispositions.py)"
METADATA_ETAG = "a new one on every update, a stale one accepted as Vertex accepts it (Google's system test updates an experiment context with an etag read before another update: core/recipe.py checks_etag)"
ETAG = "compared on update, a stale one is 409 ABORTED (core/fields.py check_etag); a create ignores it, as for any new resource"
ASSIGNED = "the server names the resource (its ID parameter or a new ID), as Vertex does: a name in the body is replaced"
STORED = "stored and answered back on get/list, as Vertex does; it only describes the resource"
NOTEBOOK = "refused (pipelines/routes.py validate_schedule): the local cloud schedules pipeline jobs only"
SCHEDULER = "pipelines/scheduler.py, tests/schedules_test.py"
SEARCH = "what the samplers draw from (training/tuning.py, studies/optimizer.py)"
SAFETY = "refused for a tuning job (training/tuning.py refuse_unhonoured) and a Study (studies/validation.py)"
NOTEBOOK_FIELDS = {
    "NotebookExecutionJob": ("dataform_repository_source", "gcs_notebook_source", "direct_notebook_source",
                             "notebook_runtime_template_resource_name", "custom_environment_spec",
                             "gcs_output_uri", "execution_user", "service_account", "workbench_runtime",
                             "execution_timeout", "schedule_resource_name", "kernel_name", "encryption_spec",
                             "display_name", "labels"),
    "NotebookExecutionJob.DataformRepositorySource": ("dataform_repository_resource_name", "commit_sha"),
    "NotebookExecutionJob.GcsNotebookSource": ("uri", "generation"),
    "NotebookExecutionJob.DirectNotebookSource": ("content",),
    "NotebookExecutionJob.CustomEnvironmentSpec": ("machine_spec", "persistent_disk_spec", "network_spec"),
    "PersistentDiskSpec": ("disk_type", "disk_size_gb"),
    "NetworkSpec": ("enable_internet_access", "network", "subnetwork"),
    "CreateNotebookExecutionJobRequest": ("parent", "notebook_execution_job", "notebook_execution_job_id"),
}
REST: dict[tuple[str, str], Disposition] = {
    # -- custom jobs: fields inside one the job log notes as a whole
    **{("ReservationAffinity", f): no_local_effect(f"under machineSpec.reservationAffinity, {NOTED_JOB}")
       for f in ("reservation_affinity_type", "key", "values")},
    **{("DiskSpec", f): no_local_effect(f"under diskSpec (validated by vertexkit.specs), {NOTED_JOB}")
       for f in ("boot_disk_type", "boot_disk_size_gb")},
    **{("PscInterfaceConfig", f): no_local_effect("under pscInterfaceConfig, noted in the job log or create operation (training/dispositions.py, core/fields.py)")
       for f in ("network_attachment", "dns_peering_configs")},
    **{("DnsPeeringConfig", f): no_local_effect("under pscInterfaceConfig, noted in the job log or create operation")
       for f in ("domain", "target_project", "target_network")},
    ("EncryptionSpec", "kms_key_name"): no_local_effect("its encryptionSpec is noted in the job log or create operation of each resource that takes one (training/dispositions.py, registry/dispositions.py, core/fields.py); a pipeline job's fills {{$.pipeline_encryption_key_name}}"),
    # -- tuning
    ("StudySpec.MetricSpec", "safety_config"): refused(SAFETY),
    ("StudySpec.MetricSpec.SafetyMetricConfig", "safety_threshold"): refused(SAFETY),
    ("StudySpec.MetricSpec.SafetyMetricConfig", "desired_min_safe_trials_fraction"): refused(SAFETY),
    ("StudySpec", "parameters"): honoured(f"the search space: {SEARCH}"),
    **{(f"StudySpec.ParameterSpec.{spec}", f): honoured(f"the range {SEARCH}")
       for spec in ("DoubleValueSpec", "IntegerValueSpec") for f in ("min_value", "max_value")},
    **{(f"StudySpec.ParameterSpec.{spec}", "values"): honoured(f"the values {SEARCH}")
       for spec in ("CategoricalValueSpec", "DiscreteValueSpec")},
    **{(f"StudySpec.ParameterSpec.{spec}", "default_value"): honoured(
        "a Study's first trial tries it (studies/optimizer.py starting_point); a tuning job notes "
        "in its log that it does not, as Vertex's reference says ('Not supported by HyperparameterTuningJob')")
       for spec in ("DoubleValueSpec", "IntegerValueSpec", "CategoricalValueSpec", "DiscreteValueSpec")},
    **{(f"StudySpec.ParameterSpec.ConditionalParameterSpec.{cond}", "values"): honoured(
        "the child is drawn only when its parent takes one of them (training/tuning.py, tuning_test.py)")
       for cond in ("DiscreteValueCondition", "IntValueCondition", "CategoricalValueCondition")},
    ("StudyTimeConstraint", "max_duration"): honoured("since the study began (training/tuning.py, tests/vertex_tuning_stopping_test.py)"),
    # -- training pipelines
    **{("FilterSplit", f): refused("its filterSplit is refused (specs/datasets.py): only unstructured datasets take it")
       for f in ("training_filter", "validation_filter", "test_filter")},
    ("InputDataConfig", "stratified_split"): refused("specs/datasets.py: not served locally; use fractionSplit"),
    ("StratifiedSplit", "key"): refused("its stratifiedSplit is refused (specs/datasets.py)"),
    ("PredefinedSplit", "key"): honoured("the column whose values split the rows (datasets/export.py)"),
    ("TimestampSplit", "key"): honoured("the column the rows are ordered by (datasets/export.py)"),
    ("TrainingPipeline", "encryption_spec"): no_local_effect("given to the backing custom job, whose job log notes it once, and to the uploaded model (training_pipelines/run.py)"),
    ("Model", "name"): honoured(ASSIGNED),
    ("Model", "etag"): honoured("an upload makes a new model: its etag is the registry's own"),
    ("GcsSource", "uris"): honoured("the files read (batch_prediction/run.py, datasets/transfer.py)"),
    # -- metadata, datasets, tensorboards: the recipe's standard methods
    **{(kind, "etag"): honoured(ETAG) for kind in (
        "Endpoint", "Dataset", "DatasetVersion", "Tensorboard", "TensorboardExperiment",
        "TensorboardRun", "TensorboardTimeSeries")},
    **{(kind, "etag"): honoured(METADATA_ETAG) for kind in ("Context", "Artifact", "Execution")},
    **{(kind, "name"): honoured(ASSIGNED) for kind in (
        "Schedule", "PersistentResource", "DeploymentResourcePool", "Context")},
    **{(kind, field): honoured(STORED) for kind, field in (
        ("Context", "metadata"), ("Artifact", "uri"), ("Artifact", "state"), ("Artifact", "metadata"),
        ("Execution", "state"), ("Execution", "metadata"), ("TensorboardExperiment", "source"),
        ("MetadataSchema", "schema"), ("MetadataSchema", "schema_type"),
        ("Dataset", "saved_queries"), ("SavedQuery", "metadata"), ("SavedQuery", "problem_type"),
        ("SavedQuery", "etag"))},
    ("Dataset", "metadata_schema_uri"): honoured("the data type: tabular datasets read their source (datasets/sources.py)"),
    ("Dataset", "metadata"): honoured("its inputConfig is the tabular source read (datasets/sources.py)"),
    # -- pipeline jobs
    ("PipelineJob.RuntimeConfig", "parameters"): honoured("read as the parameterValues it stands for (pipelines/routes.py with_legacy_parameters)"),
    **{("Value", f): honoured("a legacy parameter's value (pipelines/routes.py _legacy_value)")
       for f in ("int_value", "double_value", "string_value")},
    ("PipelineJob.RuntimeConfig", "failure_policy"): honoured("FAIL_SLOW (the default) runs every task that can still run; FAIL_FAST starts no task after the first failure (pipelines/executor.py)"),
    ("PipelineJob", "template_uri"): honoured(STORED),
    # -- schedules
    ("Schedule", "create_notebook_execution_job_request"): refused(NOTEBOOK),
    **{(message, f): refused(NOTEBOOK) for message, names in NOTEBOOK_FIELDS.items() for f in names},
    ("Schedule", "start_time"): honoured(f"no run is scheduled before it ({SCHEDULER})"),
    ("Schedule", "end_time"): honoured(f"no run after it; the schedule is then COMPLETED ({SCHEDULER})"),
    ("Schedule", "max_run_count"): honoured(f"COMPLETED once that many runs started ({SCHEDULER})"),
    ("Schedule", "max_concurrent_run_count"): honoured(f"a due time finding that many runs active is skipped, or waits with allowQueueing ({SCHEDULER})"),
    ("Schedule", "max_concurrent_active_run_count"): honoured(f"no more runs active at once (scheduler.py run_limit; {SCHEDULER})"),
    ("CreatePipelineJobRequest", "pipeline_job_id"): honoured(f"the prefix of each run's ID, <id>-<yyyymmddhhmmss> (pipelines/routes.py; {SCHEDULER})"),
    ("CreatePipelineJobRequest", "parent"): honoured("where each run is created (pipelines/routes.py _start_scheduled_run)"),
    ("Schedule", "allow_queueing"): honoured(f"due times wait for a free run slot, in order ({SCHEDULER})"),
    # -- persistent resources
    **{("RaySpec", f): refused("its raySpec is refused (persistent_resources/rules.py): no Ray here")
       for f in ("resource_pool_images", "head_node_resource_pool_id", "ray_metric_spec", "ray_logs_spec")},
    # -- batch prediction and metadata stores: inside a field refused or noted as a whole
    ("UnmanagedContainerModel", "predict_schemata"): refused("its unmanagedContainerModel is refused (core/fields.py)"),
    ("VertexMultimodalDatasetSource", "dataset_name"): refused("its vertexMultimodalDatasetSource is refused (core/fields.py)"),
    ("MetadataStore", "dataplex_config"): no_local_effect("its enabledPipelinesLineage is noted in the create operation (core/fields.py)"),
    ("RayMetricSpec", "disabled"): refused("its raySpec is refused (persistent_resources/rules.py)"),
    ("RayLogsSpec", "disabled"): refused("its raySpec is refused (persistent_resources/rules.py)"),
}
DESCRIPTIVE = "stored and answered back on get/list; Vertex only describes the model with it"
EXPLAINED = "refused when explained (registry/explain.py): only sampled Shapley runs locally"
REGISTRY: dict[tuple[str, str], Disposition] = {
    **{("Model", field): honoured(DESCRIPTIVE) for field in (
        "predict_schemata", "metadata_schema_uri", "metadata", "data_stats", "base_model_source")},
    **{("PredictSchemata", field): honoured(DESCRIPTIVE) for field in (
        "instance_schema_uri", "parameters_schema_uri", "prediction_schema_uri")},
    **{("Model.DataStats", field): honoured(DESCRIPTIVE) for field in (
        "training_data_items_count", "validation_data_items_count", "test_data_items_count",
        "training_annotations_count", "validation_annotations_count", "test_annotations_count")},
    **{(message, field): honoured(DESCRIPTIVE) for message, field in (
        ("Model.BaseModelSource", "model_garden_source"), ("Model.BaseModelSource", "genie_source"),
        ("ModelGardenSource", "public_model_name"), ("ModelGardenSource", "skip_hf_model_cache"),
        ("GenieSource", "base_model_uri"))},
    **{("ModelContainerSpec", field): honoured("the server process's command, arguments and environment (registry/serving.py)")
       for field in ("command", "args", "env")},
    ("Port", "container_port"): honoured("AIP_HTTP_PORT (registry/serving.py)"),
    ("ExplanationSpec", "parameters"): honoured("read in registry/explain.py"),
    ("ExplanationSpec", "metadata"): honoured("its inputs' baselines are read in registry/explain.py"),
    ("ExplanationMetadata", "inputs"): honoured("one per feature or per instance key (registry/explain.py)"),
    ("ExplanationMetadata", "outputs"): no_local_effect("its fields are noted in the operation (registry/dispositions.py)"),
    **{("IntegratedGradientsAttribution", field): refused(EXPLAINED) for field in (
        "step_count", "smooth_grad_config", "blur_baseline_config")},
    **{("XraiAttribution", field): refused(EXPLAINED) for field in (
        "step_count", "smooth_grad_config", "blur_baseline_config")},
    **{(message, field): refused(EXPLAINED) for message, field in (
        ("SmoothGradConfig", "noise_sigma"), ("SmoothGradConfig", "feature_noise_sigma"),
        ("SmoothGradConfig", "noisy_sample_count"), ("FeatureNoiseSigma", "noise_sigma"),
        ("FeatureNoiseSigma.NoiseSigmaForFeature", "name"),
        ("FeatureNoiseSigma.NoiseSigmaForFeature", "sigma"),
        ("BlurBaselineConfig", "max_blur_sigma"),
        ("Examples", "example_gcs_source"), ("Examples", "nearest_neighbor_search_config"),
        ("Examples", "presets"), ("Examples", "neighbor_count"),
        ("Examples.ExampleGcsSource", "data_format"), ("Examples.ExampleGcsSource", "gcs_source"),
        ("Presets", "query"), ("Presets", "modality"))},
    ("ExplanationMetadata.InputMetadata.FeatureValueDomain", "min_value"): no_local_effect("under featureValueDomain, noted in the operation"),
    ("ExplanationMetadata.InputMetadata.FeatureValueDomain", "max_value"): no_local_effect("under featureValueDomain, noted in the operation"),
    ("ExplanationMetadata.InputMetadata.FeatureValueDomain", "original_mean"): no_local_effect("under featureValueDomain, noted in the operation"),
    ("ExplanationMetadata.InputMetadata.FeatureValueDomain", "original_stddev"): no_local_effect("under featureValueDomain, noted in the operation"),
    **{("ExplanationMetadata.InputMetadata.Visualization", field): no_local_effect("under visualization, noted in the operation")
       for field in ("type_", "polarity", "color_map", "clip_percent_upperbound",
                     "clip_percent_lowerbound", "overlay_type")},
    **{("PSCAutomationConfig", field): no_local_effect("under privateServiceConnectConfig, noted in the operation")
       for field in ("project_id", "network")},
    ("Endpoint", "predict_request_response_logging_config"): refused("when enabled (registry/dispositions.py): nothing logs locally"),
    ("PredictRequestResponseLoggingConfig", "bigquery_destination"): refused("with enabled (registry/dispositions.py): nothing logs locally"),
    ("Endpoint", "gen_ai_advanced_features_config"): refused("when RAG is enabled (registry/dispositions.py)"),
    ("GenAiAdvancedFeaturesConfig", "rag_config"): refused("when RAG is enabled (registry/dispositions.py)"),
    ("DeployedModel", "faster_deployment_config"): no_local_effect("its fastTryoutEnabled is noted in the deploy operation"),
    **{(message, field): no_local_effect("under speculativeDecodingSpec, noted in the deploy operation") for message, field in (
        ("SpeculativeDecodingSpec", "draft_model_speculation"), ("SpeculativeDecodingSpec", "ngram_speculation"),
        ("SpeculativeDecodingSpec", "speculative_token_count"),
        ("SpeculativeDecodingSpec.DraftModelSpeculation", "draft_model"),
        ("SpeculativeDecodingSpec.NgramSpeculation", "ngram_size"))},
    **{("AutoscalingMetricSpec", field): no_local_effect("under autoscalingMetricSpecs, noted in the deploy operation")
       for field in ("metric_name", "target")},
}
# fmt: on

# The training area's table, by the proto message each of its field groups belongs to.
JOB_GROUPS = (
    ("CustomJobSpec", job_fields.REFUSED_SPEC, refused),
    ("WorkerPoolSpec", job_fields.REFUSED_POOL, refused),
    ("CustomJob", job_fields.NOTES_JOB, no_local_effect),
    ("HyperparameterTuningJob", job_fields.NOTES_JOB, no_local_effect),
    ("CustomJobSpec", job_fields.NOTES_SPEC, no_local_effect),
    ("Scheduling", job_fields.NOTES_SCHEDULING, no_local_effect),
    ("WorkerPoolSpec", job_fields.NOTES_POOL, no_local_effect),
    ("MachineSpec", job_fields.NOTES_MACHINE, no_local_effect),
)


def registry_entries() -> dict[tuple[str, str], Disposition]:
    """The registry's table (registry/dispositions.py): each path's last field, by message."""
    entries = {}
    for table, is_refused in registry_fields.ALL_TABLES:
        for path, (message, why) in table.items():
            disposition = refused if is_refused else no_local_effect
            entries[(message, camel_to_snake(path.split(".")[-1]))] = disposition(f"registry/dispositions.py: {why}")
    return entries


def core_entries() -> dict[tuple[str, str], Disposition]:
    """The shared table (core/fields.py) for the areas with none of their own."""
    entries = {}
    for table, is_refused in core_fields.ALL_TABLES:
        for path, (message, why) in table.items():
            disposition = refused if is_refused else no_local_effect
            entries[(message, camel_to_snake(path.split(".")[-1]))] = disposition(f"core/fields.py: {why}")
    return entries


def decided() -> dict[tuple[str, str], Disposition]:
    """The areas' own decisions, keyed by full message name."""
    own = {**OWN, **REGISTRY, **REST, **registry_entries(), **core_entries()}
    for message, group, disposition in JOB_GROUPS:
        for field, why in group.items():
            own[(message, camel_to_snake(field))] = disposition(f"training/dispositions.py: {why}")
    return {(PACKAGE + message, field): d for (message, field), d in own.items()}
