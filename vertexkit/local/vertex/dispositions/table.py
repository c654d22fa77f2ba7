# ruff: noqa: E501  (one line per field keeps the table readable)
"""The declared table: what the local cloud does with each request field (OUTPUT_ONLY fields are
classified from the descriptors and do not appear here).

Keys are (message, field) with the `google.cloud.aiplatform.v1.` prefix left off, so a message
shared by several resources (MachineSpec, EncryptionSpec...) is decided once. Decided by grepping
each field's camelCase JSON name, quoted, in vertexkit/local/vertex and vertexkit/specs and
reading the hits: "read in F" names where the code reads it; UNDECIDED says what was found.
"""

from __future__ import annotations

from vertexkit.local.vertex.dispositions.model import (
    PACKAGE,
    Disposition,
    honoured,
    undecided,
)

NOT_LOGGED = "stored only; nothing says in the log that it has no local effect"

# One line per field, so the table reads as a list:
# fmt: off
_TABLE: dict[tuple[str, str], Disposition] = {
    # -- CustomJob
    ("CustomJob", "display_name"): honoured("stored and answered back on get/list, as Vertex does"),
    ("CustomJob", "job_spec"): honoured("read in training_pipelines/run.py, training/execution.py ..."),
    # -- CustomJobSpec
    ("CustomJobSpec", "persistent_resource_id"): honoured("read in persistent_resources/jobs.py, persistent_resources/routes.py ..."),
    ("CustomJobSpec", "worker_pool_specs"): honoured("read in persistent_resources/jobs.py, training_pipelines/run.py ..."),
    # -- WorkerPoolSpec
    ("WorkerPoolSpec", "container_spec"): honoured("read in training_pipelines/run.py, training/execution.py ..."),
    # -- ContainerSpec
    ("ContainerSpec", "image_uri"): honoured("read in training/execution.py, backend.py ..."),
    ("ContainerSpec", "command"): honoured("the container's entrypoint (training/execution.py)"),
    ("ContainerSpec", "args"): honoured("the container's arguments (training/execution.py)"),
    ("ContainerSpec", "env"): honoured("set in the container's environment (training/execution.py)"),
    # -- EnvVar
    ("EnvVar", "name"): honoured("set in the process environment; checked a C identifier (specs/worker_pools.py)"),
    ("EnvVar", "value"): honoured("set in the process environment (training/execution.py)"),
    # -- WorkerPoolSpec
    ("WorkerPoolSpec", "python_package_spec"): honoured("read in training_pipelines/run.py, training/execution.py ..."),
    # -- PythonPackageSpec
    ("PythonPackageSpec", "executor_image_uri"): honoured("read in training/execution.py"),
    ("PythonPackageSpec", "package_uris"): honoured("read in training/execution.py, training/runnable.py"),
    ("PythonPackageSpec", "python_module"): honoured("read in training/execution.py, training/runnable.py"),
    ("PythonPackageSpec", "args"): honoured("passed to the module (training/execution.py)"),
    ("PythonPackageSpec", "env"): honoured("set in the process environment (training/execution.py)"),
    # -- WorkerPoolSpec
    ("WorkerPoolSpec", "machine_spec"): honoured("read in persistent_resources/jobs.py, persistent_resources/rules.py ..."),
    # -- MachineSpec
    ("MachineSpec", "machine_type"): honoured("read in persistent_resources/jobs.py, persistent_resources/rules.py ..."),
    ("MachineSpec", "accelerator_type"): honoured("read in persistent_resources/jobs.py, training/execution.py ..."),
    ("MachineSpec", "accelerator_count"): honoured("read in persistent_resources/jobs.py, training/execution.py ..."),
    ("MachineSpec", "gpu_partition_size"): undecided("read by nothing"),
    ("MachineSpec", "tpu_topology"): honoured("read in persistent_resources/jobs.py"),
    ("MachineSpec", "reservation_affinity"): undecided("read by nothing"),
    # -- ReservationAffinity
    ("ReservationAffinity", "reservation_affinity_type"): undecided("read by nothing"),
    ("ReservationAffinity", "key"): undecided("name too common to trace (quoted in training_pipelines/routes.py, batch_prediction/run.py ...); unverified"),
    ("ReservationAffinity", "values"): undecided("name too common to trace (quoted in training/tuning.py, tensorboards/writes.py ...); unverified"),
    # -- WorkerPoolSpec
    ("WorkerPoolSpec", "replica_count"): honoured("read in persistent_resources/jobs.py, persistent_resources/rules.py ..."),
    ("WorkerPoolSpec", "nfs_mounts"): undecided("only declared in vertexkit.specs: nothing mounts it (in progress)"),
    # -- NfsMount
    ("NfsMount", "server"): undecided("read by nothing"),
    ("NfsMount", "path"): undecided("name too common to trace (quoted in router.py); unverified"),
    ("NfsMount", "mount_point"): undecided("read by nothing"),
    # -- WorkerPoolSpec
    ("WorkerPoolSpec", "lustre_mounts"): undecided("read by nothing"),
    # -- LustreMount
    ("LustreMount", "instance_ip"): undecided("read by nothing"),
    ("LustreMount", "volume_handle"): undecided("read by nothing"),
    ("LustreMount", "filesystem"): undecided("read by nothing"),
    ("LustreMount", "mount_point"): undecided("read by nothing"),
    # -- WorkerPoolSpec
    ("WorkerPoolSpec", "disk_spec"): honoured("read in persistent_resources/rules.py"),
    # -- DiskSpec
    ("DiskSpec", "boot_disk_type"): undecided("only vertexkit.specs validates it; nothing here acts on it"),
    ("DiskSpec", "boot_disk_size_gb"): undecided("only vertexkit.specs validates it; nothing here acts on it"),
    # -- CustomJobSpec
    ("CustomJobSpec", "scheduling"): honoured("read in training/execution.py"),
    # -- Scheduling
    ("Scheduling", "timeout"): honoured("the job is stopped at it (training/runner.py)"),
    ("Scheduling", "restart_job_on_worker_restart"): honoured("read in training/execution.py"),
    ("Scheduling", "strategy"): undecided("validated as an enum only: SPOT/FLEX_START run at once here (in progress)"),
    ("Scheduling", "disable_retries"): undecided("only vertexkit.specs names it: no retry loop reads it (in progress)"),
    ("Scheduling", "max_wait_duration"): undecided("only validated as a duration: nothing waits (in progress)"),
    # -- CustomJobSpec
    ("CustomJobSpec", "service_account"): undecided("required by a persistent resource with a custom service account (persistent_resources/jobs.py); otherwise "+ NOT_LOGGED),
    ("CustomJobSpec", "network"): undecided("compared with a persistent resource's on placement (persistent_resources/jobs.py); otherwise "+ NOT_LOGGED),
    ("CustomJobSpec", "reserved_ip_ranges"): undecided("read by nothing; " + NOT_LOGGED),
    ("CustomJobSpec", "psc_interface_config"): undecided("read by nothing"),
    # -- PscInterfaceConfig
    ("PscInterfaceConfig", "network_attachment"): undecided("read by nothing"),
    ("PscInterfaceConfig", "dns_peering_configs"): undecided("read by nothing"),
    # -- DnsPeeringConfig
    ("DnsPeeringConfig", "domain"): undecided("read by nothing"),
    ("DnsPeeringConfig", "target_project"): undecided("read by nothing"),
    ("DnsPeeringConfig", "target_network"): undecided("read by nothing"),
    # -- CustomJobSpec
    ("CustomJobSpec", "base_output_directory"): honoured("read in training_pipelines/routes.py, training_pipelines/run.py ..."),
    # -- GcsDestination
    ("GcsDestination", "output_uri_prefix"): honoured("read in training_pipelines/routes.py, training_pipelines/run.py ..."),
    # -- CustomJobSpec
    ("CustomJobSpec", "protected_artifact_location_id"): undecided("read by nothing"),
    ("CustomJobSpec", "tensorboard"): undecided("not read by the training runner: nothing uploads logs to it (in progress)"),
    ("CustomJobSpec", "enable_web_access"): undecided("only declared in vertexkit.specs: no shell is offered (in progress)"),
    ("CustomJobSpec", "enable_dashboard_access"): undecided("only declared in vertexkit.specs (in progress)"),
    ("CustomJobSpec", "experiment"): undecided("not read by the training runner: no run is recorded (in progress)"),
    ("CustomJobSpec", "experiment_run"): undecided("only declared in vertexkit.specs (in progress)"),
    ("CustomJobSpec", "models"): undecided("name too common to trace (quoted in registry/routes.py, registry/models.py); unverified"),
    # -- CustomJob
    ("CustomJob", "labels"): honoured("stored and answered back on get/list, as Vertex does"),
    ("CustomJob", "encryption_spec"): undecided("compared with a persistent resource's on placement (persistent_resources/jobs.py); otherwise "+ NOT_LOGGED),
    # -- EncryptionSpec
    ("EncryptionSpec", "kms_key_name"): undecided("copied into pipeline placeholders (pipelines/placeholders.py); nothing is encrypted and the log does not say so"),
    # -- HyperparameterTuningJob
    ("HyperparameterTuningJob", "display_name"): honoured("stored and answered back on get/list, as Vertex does"),
    ("HyperparameterTuningJob", "study_spec"): honoured("read in training/routes.py, training/tuning.py ..."),
    # -- StudySpec
    ("StudySpec", "decay_curve_stopping_spec"): undecided("refused for a Study (studies/validation.py); a HyperparameterTuningJob's studySpec skips that check (training/tuning.py reads none of it): silent there"),
    # -- StudySpec.DecayCurveAutomatedStoppingSpec
    ("StudySpec.DecayCurveAutomatedStoppingSpec", "use_elapsed_duration"): undecided("its parent is refused for a Study; a HyperparameterTuningJob's studySpec skips that check (training/tuning.py reads none of it): silent there"),
    # -- StudySpec
    ("StudySpec", "median_automated_stopping_spec"): undecided("a Study runs the median rule (studies/routes.py checkTrialEarlyStoppingState); a tuning job does not (in progress)"),
    # -- StudySpec.MedianAutomatedStoppingSpec
    ("StudySpec.MedianAutomatedStoppingSpec", "use_elapsed_duration"): undecided("true is refused for a Study (studies/validation.py); a HyperparameterTuningJob's studySpec skips that check (training/tuning.py reads none of it): silent there"),
    # -- StudySpec
    ("StudySpec", "convex_automated_stopping_spec"): undecided("refused for a Study (studies/validation.py); a HyperparameterTuningJob's studySpec skips that check (training/tuning.py reads none of it): silent there"),
    # -- StudySpec.ConvexAutomatedStoppingSpec
    ("StudySpec.ConvexAutomatedStoppingSpec", "max_step_count"): undecided("read by nothing"),
    ("StudySpec.ConvexAutomatedStoppingSpec", "min_step_count"): undecided("read by nothing"),
    ("StudySpec.ConvexAutomatedStoppingSpec", "min_measurement_count"): undecided("read by nothing"),
    ("StudySpec.ConvexAutomatedStoppingSpec", "learning_rate_parameter_name"): undecided("read by nothing"),
    ("StudySpec.ConvexAutomatedStoppingSpec", "use_elapsed_duration"): undecided("its parent is refused for a Study; a HyperparameterTuningJob's studySpec skips that check (training/tuning.py reads none of it): silent there"),
    ("StudySpec.ConvexAutomatedStoppingSpec", "update_all_stopped_trials"): undecided("read by nothing"),
    # -- StudySpec
    ("StudySpec", "metrics"): honoured("read in training/tuning.py, studies/optimizer.py ..."),
    # -- StudySpec.MetricSpec
    ("StudySpec.MetricSpec", "metric_id"): honoured("read in training/tuning.py, studies/optimizer.py ..."),
    ("StudySpec.MetricSpec", "goal"): honoured("read in training/tuning.py, studies/optimizer.py ..."),
    ("StudySpec.MetricSpec", "safety_config"): undecided("refused for a Study (studies/validation.py); a HyperparameterTuningJob's studySpec skips that check (training/tuning.py reads none of it): silent there"),
    # -- StudySpec.MetricSpec.SafetyMetricConfig
    ("StudySpec.MetricSpec.SafetyMetricConfig", "safety_threshold"): undecided("read by nothing"),
    ("StudySpec.MetricSpec.SafetyMetricConfig", "desired_min_safe_trials_fraction"): undecided("read by nothing"),
    # -- StudySpec
    ("StudySpec", "parameters"): undecided("name too common to trace (quoted in training/tuning.py, pipelines/driver.py ...); unverified"),
    # -- StudySpec.ParameterSpec
    ("StudySpec.ParameterSpec", "double_value_spec"): honoured("read in training/tuning.py, studies/optimizer.py ..."),
    # -- StudySpec.ParameterSpec.DoubleValueSpec
    ("StudySpec.ParameterSpec.DoubleValueSpec", "min_value"): undecided("name too common to trace (quoted in training/tuning.py, studies/optimizer.py ...); unverified"),
    ("StudySpec.ParameterSpec.DoubleValueSpec", "max_value"): undecided("name too common to trace (quoted in training/tuning.py, studies/optimizer.py ...); unverified"),
    ("StudySpec.ParameterSpec.DoubleValueSpec", "default_value"): undecided("only vertexkit.specs validates it; nothing here acts on it"),
    # -- StudySpec.ParameterSpec
    ("StudySpec.ParameterSpec", "integer_value_spec"): honoured("read in training/tuning.py, studies/optimizer.py ..."),
    # -- StudySpec.ParameterSpec.IntegerValueSpec
    ("StudySpec.ParameterSpec.IntegerValueSpec", "min_value"): undecided("name too common to trace (quoted in training/tuning.py, studies/optimizer.py ...); unverified"),
    ("StudySpec.ParameterSpec.IntegerValueSpec", "max_value"): undecided("name too common to trace (quoted in training/tuning.py, studies/optimizer.py ...); unverified"),
    ("StudySpec.ParameterSpec.IntegerValueSpec", "default_value"): undecided("only vertexkit.specs validates it; nothing here acts on it"),
    # -- StudySpec.ParameterSpec
    ("StudySpec.ParameterSpec", "categorical_value_spec"): honoured("read in training/tuning.py, studies/validation.py"),
    # -- StudySpec.ParameterSpec.CategoricalValueSpec
    ("StudySpec.ParameterSpec.CategoricalValueSpec", "values"): undecided("name too common to trace (quoted in training/tuning.py, tensorboards/writes.py ...); unverified"),
    ("StudySpec.ParameterSpec.CategoricalValueSpec", "default_value"): undecided("only vertexkit.specs validates it; nothing here acts on it"),
    # -- StudySpec.ParameterSpec
    ("StudySpec.ParameterSpec", "discrete_value_spec"): honoured("read in training/tuning.py, studies/optimizer.py ..."),
    # -- StudySpec.ParameterSpec.DiscreteValueSpec
    ("StudySpec.ParameterSpec.DiscreteValueSpec", "values"): undecided("name too common to trace (quoted in training/tuning.py, tensorboards/writes.py ...); unverified"),
    ("StudySpec.ParameterSpec.DiscreteValueSpec", "default_value"): undecided("only vertexkit.specs validates it; nothing here acts on it"),
    # -- StudySpec.ParameterSpec
    ("StudySpec.ParameterSpec", "parameter_id"): honoured("read in training/tuning.py, studies/routes.py ..."),
    ("StudySpec.ParameterSpec", "scale_type"): honoured("read in training/tuning.py, studies/optimizer.py"),
    ("StudySpec.ParameterSpec", "conditional_parameter_specs"): honoured("read in training/tuning.py"),
    # -- StudySpec.ParameterSpec.ConditionalParameterSpec
    ("StudySpec.ParameterSpec.ConditionalParameterSpec", "parent_discrete_values"): honoured("read in training/tuning.py"),
    # -- StudySpec.ParameterSpec.ConditionalParameterSpec.DiscreteValueCondition
    ("StudySpec.ParameterSpec.ConditionalParameterSpec.DiscreteValueCondition", "values"): undecided("name too common to trace (quoted in training/tuning.py, tensorboards/writes.py ...); unverified"),
    # -- StudySpec.ParameterSpec.ConditionalParameterSpec
    ("StudySpec.ParameterSpec.ConditionalParameterSpec", "parent_int_values"): honoured("read in training/tuning.py"),
    # -- StudySpec.ParameterSpec.ConditionalParameterSpec.IntValueCondition
    ("StudySpec.ParameterSpec.ConditionalParameterSpec.IntValueCondition", "values"): undecided("name too common to trace (quoted in training/tuning.py, tensorboards/writes.py ...); unverified"),
    # -- StudySpec.ParameterSpec.ConditionalParameterSpec
    ("StudySpec.ParameterSpec.ConditionalParameterSpec", "parent_categorical_values"): honoured("read in training/tuning.py"),
    # -- StudySpec.ParameterSpec.ConditionalParameterSpec.CategoricalValueCondition
    ("StudySpec.ParameterSpec.ConditionalParameterSpec.CategoricalValueCondition", "values"): undecided("name too common to trace (quoted in training/tuning.py, tensorboards/writes.py ...); unverified"),
    # -- StudySpec.ParameterSpec.ConditionalParameterSpec
    ("StudySpec.ParameterSpec.ConditionalParameterSpec", "parameter_spec"): honoured("read in training/tuning.py"),
    # -- StudySpec
    ("StudySpec", "algorithm"): honoured("read in training/tuning.py, studies/routes.py ..."),
    ("StudySpec", "observation_noise"): undecided("non-default refused for a Study (studies/validation.py); a HyperparameterTuningJob's studySpec skips that check (training/tuning.py reads none of it): silent there"),
    ("StudySpec", "measurement_selection_type"): honoured("read in training/tuning.py, studies/ranking.py"),
    ("StudySpec", "study_stopping_config"): undecided("a Study honours maxNumTrials and refuses the rest (studies/validation.py); a tuning job reads none of it"),
    # -- StudySpec.StudyStoppingConfig
    ("StudySpec.StudyStoppingConfig", "should_stop_asap"): undecided("read by nothing"),
    ("StudySpec.StudyStoppingConfig", "minimum_runtime_constraint"): undecided("read by nothing"),
    # -- StudyTimeConstraint
    ("StudyTimeConstraint", "max_duration"): undecided("read by nothing"),
    ("StudyTimeConstraint", "end_time"): honoured("read in training_pipelines/models.py, training/routes.py ..."),
    # -- StudySpec.StudyStoppingConfig
    ("StudySpec.StudyStoppingConfig", "maximum_runtime_constraint"): undecided("read by nothing"),
    ("StudySpec.StudyStoppingConfig", "min_num_trials"): undecided("read by nothing"),
    ("StudySpec.StudyStoppingConfig", "max_num_trials"): undecided("a Study stops at it (studies/routes.py); a tuning job ignores it"),
    ("StudySpec.StudyStoppingConfig", "max_num_trials_no_progress"): undecided("read by nothing"),
    ("StudySpec.StudyStoppingConfig", "max_duration_no_progress"): undecided("read by nothing"),
    # -- HyperparameterTuningJob
    ("HyperparameterTuningJob", "max_trial_count"): honoured("read in training/routes.py, training/tuning.py"),
    ("HyperparameterTuningJob", "parallel_trial_count"): honoured("read in training/routes.py, training/tuning.py"),
    ("HyperparameterTuningJob", "max_failed_trial_count"): honoured("read in training/tuning.py"),
    ("HyperparameterTuningJob", "trial_job_spec"): honoured("read in training/routes.py, training/tuning.py"),
    ("HyperparameterTuningJob", "labels"): honoured("stored and answered back on get/list, as Vertex does"),
    ("HyperparameterTuningJob", "encryption_spec"): undecided(NOT_LOGGED),
    # -- TrainingPipeline
    ("TrainingPipeline", "display_name"): honoured("stored and answered back on get/list, as Vertex does"),
    ("TrainingPipeline", "input_data_config"): honoured("read in training_pipelines/routes.py, training_pipelines/run.py"),
    # -- InputDataConfig
    ("InputDataConfig", "fraction_split"): honoured("read in datasets/transfer.py"),
    # -- FractionSplit
    ("FractionSplit", "training_fraction"): honoured("read in datasets/transfer.py"),
    ("FractionSplit", "validation_fraction"): honoured("read in datasets/transfer.py"),
    ("FractionSplit", "test_fraction"): honoured("read in datasets/transfer.py"),
    # -- InputDataConfig
    ("InputDataConfig", "filter_split"): honoured("read in datasets/transfer.py"),
    # -- FilterSplit
    ("FilterSplit", "training_filter"): undecided("read by nothing"),
    ("FilterSplit", "validation_filter"): undecided("read by nothing"),
    ("FilterSplit", "test_filter"): undecided("read by nothing"),
    # -- InputDataConfig
    ("InputDataConfig", "predefined_split"): honoured("read in training_pipelines/routes.py, datasets/export.py"),
    # -- PredefinedSplit
    ("PredefinedSplit", "key"): undecided("name too common to trace (quoted in training_pipelines/routes.py, batch_prediction/run.py ...); unverified"),
    # -- InputDataConfig
    ("InputDataConfig", "timestamp_split"): honoured("read in training_pipelines/routes.py, datasets/export.py"),
    # -- TimestampSplit
    ("TimestampSplit", "training_fraction"): honoured("read in datasets/transfer.py"),
    ("TimestampSplit", "validation_fraction"): honoured("read in datasets/transfer.py"),
    ("TimestampSplit", "test_fraction"): honoured("read in datasets/transfer.py"),
    ("TimestampSplit", "key"): undecided("name too common to trace (quoted in training_pipelines/routes.py, batch_prediction/run.py ...); unverified"),
    # -- InputDataConfig
    ("InputDataConfig", "stratified_split"): undecided("only vertexkit.specs validates it; nothing here acts on it"),
    # -- StratifiedSplit
    ("StratifiedSplit", "training_fraction"): honoured("read in datasets/transfer.py"),
    ("StratifiedSplit", "validation_fraction"): honoured("read in datasets/transfer.py"),
    ("StratifiedSplit", "test_fraction"): honoured("read in datasets/transfer.py"),
    ("StratifiedSplit", "key"): undecided("name too common to trace (quoted in training_pipelines/routes.py, batch_prediction/run.py ...); unverified"),
    # -- InputDataConfig
    ("InputDataConfig", "gcs_destination"): honoured("read in batch_prediction/run.py, datasets/export.py ..."),
    ("InputDataConfig", "bigquery_destination"): honoured("read in batch_prediction/run.py, datasets/export.py"),
    # -- BigQueryDestination
    ("BigQueryDestination", "output_uri"): honoured("read in batch_prediction/run.py, datasets/export.py"),
    # -- InputDataConfig
    ("InputDataConfig", "dataset_id"): honoured("read in training_pipelines/routes.py, training_pipelines/run.py"),
    ("InputDataConfig", "annotations_filter"): honoured("read in datasets/transfer.py, datasets/items.py"),
    ("InputDataConfig", "annotation_schema_uri"): honoured("read in datasets/transfer.py"),
    ("InputDataConfig", "saved_query_id"): honoured("read in datasets/transfer.py"),
    ("InputDataConfig", "persist_ml_use_assignment"): undecided("read by nothing"),
    # -- TrainingPipeline
    ("TrainingPipeline", "training_task_definition"): honoured("read in training_pipelines/routes.py"),
    ("TrainingPipeline", "training_task_inputs"): honoured("read in training_pipelines/routes.py"),
    ("TrainingPipeline", "model_to_upload"): honoured("read in training_pipelines/routes.py, training_pipelines/run.py"),
    # -- Model
    ("Model", "name"): undecided("name too common to trace (quoted in persistent_resources/jobs.py, persistent_resources/rules.py ...); unverified"),
    ("Model", "version_aliases"): honoured("stored and answered back on get/list, as Vertex does"),
    ("Model", "display_name"): honoured("stored and answered back on get/list, as Vertex does"),
    ("Model", "description"): honoured("stored and answered back on get/list, as Vertex does"),
    ("Model", "version_description"): honoured("stored and answered back on get/list, as Vertex does"),
    ("Model", "default_checkpoint_id"): undecided("read by nothing"),
    ("Model", "predict_schemata"): undecided("read by nothing"),
    # -- PredictSchemata
    ("PredictSchemata", "instance_schema_uri"): undecided("read by nothing"),
    ("PredictSchemata", "parameters_schema_uri"): undecided("read by nothing"),
    ("PredictSchemata", "prediction_schema_uri"): undecided("read by nothing"),
    # -- Model
    ("Model", "metadata_schema_uri"): undecided("only vertexkit.specs validates it; nothing here acts on it"),
    ("Model", "metadata"): undecided("name too common to trace (quoted in tensorboards/routes.py, tensorboards/batches.py ...); unverified"),
    ("Model", "pipeline_job"): honoured("read in pipelines/routes.py"),
    ("Model", "container_spec"): honoured("read in training_pipelines/run.py, training/execution.py ..."),
    # -- ModelContainerSpec
    ("ModelContainerSpec", "image_uri"): honoured("read in training/execution.py, backend.py ..."),
    ("ModelContainerSpec", "command"): undecided("name too common to trace (quoted in training/execution.py, training/runnable.py ...); unverified"),
    ("ModelContainerSpec", "args"): undecided("name too common to trace (quoted in training/execution.py, training/runnable.py ...); unverified"),
    ("ModelContainerSpec", "env"): undecided("name too common to trace (quoted in training_pipelines/run.py, training/runner.py ...); unverified"),
    ("ModelContainerSpec", "ports"): undecided("read by nothing"),
    # -- Port
    ("Port", "container_port"): undecided("read by nothing"),
    # -- ModelContainerSpec
    ("ModelContainerSpec", "predict_route"): honoured("read in batch_prediction/run.py, registry/endpoints.py"),
    ("ModelContainerSpec", "health_route"): honoured("read in batch_prediction/run.py, registry/endpoints.py"),
    ("ModelContainerSpec", "invoke_route_prefix"): undecided("read by nothing"),
    ("ModelContainerSpec", "grpc_ports"): undecided("read by nothing"),
    ("ModelContainerSpec", "deployment_timeout"): undecided("read by nothing"),
    ("ModelContainerSpec", "shared_memory_size_mb"): undecided("read by nothing"),
    ("ModelContainerSpec", "startup_probe"): undecided("read by nothing"),
    # -- Probe
    ("Probe", "exec_"): undecided("read by nothing"),
    # -- Probe.ExecAction
    ("Probe.ExecAction", "command"): undecided("name too common to trace (quoted in training/execution.py, training/runnable.py ...); unverified"),
    # -- Probe
    ("Probe", "http_get"): undecided("read by nothing"),
    # -- Probe.HttpGetAction
    ("Probe.HttpGetAction", "path"): undecided("name too common to trace (quoted in router.py); unverified"),
    ("Probe.HttpGetAction", "port"): undecided("read by nothing"),
    ("Probe.HttpGetAction", "host"): undecided("read by nothing"),
    ("Probe.HttpGetAction", "scheme"): undecided("read by nothing"),
    ("Probe.HttpGetAction", "http_headers"): undecided("read by nothing"),
    # -- Probe.HttpHeader
    ("Probe.HttpHeader", "name"): undecided("name too common to trace (quoted in persistent_resources/jobs.py, persistent_resources/rules.py ...); unverified"),
    ("Probe.HttpHeader", "value"): undecided("name too common to trace (quoted in training_pipelines/run.py, training/responses.py ...); unverified"),
    # -- Probe
    ("Probe", "grpc"): undecided("read by nothing"),
    # -- Probe.GrpcAction
    ("Probe.GrpcAction", "port"): undecided("read by nothing"),
    ("Probe.GrpcAction", "service"): undecided("read by nothing"),
    # -- Probe
    ("Probe", "tcp_socket"): undecided("read by nothing"),
    # -- Probe.TcpSocketAction
    ("Probe.TcpSocketAction", "port"): undecided("read by nothing"),
    ("Probe.TcpSocketAction", "host"): undecided("read by nothing"),
    # -- Probe
    ("Probe", "period_seconds"): undecided("read by nothing"),
    ("Probe", "timeout_seconds"): undecided("read by nothing"),
    ("Probe", "failure_threshold"): undecided("read by nothing"),
    ("Probe", "success_threshold"): undecided("read by nothing"),
    ("Probe", "initial_delay_seconds"): undecided("read by nothing"),
    # -- ModelContainerSpec
    ("ModelContainerSpec", "health_probe"): undecided("read by nothing"),
    ("ModelContainerSpec", "liveness_probe"): undecided("read by nothing"),
    # -- Model
    ("Model", "artifact_uri"): honoured("read in training_pipelines/run.py, backend.py ..."),
    ("Model", "explanation_spec"): honoured("read in registry/explain.py"),
    # -- ExplanationSpec
    ("ExplanationSpec", "parameters"): undecided("name too common to trace (quoted in training/tuning.py, pipelines/driver.py ...); unverified"),
    # -- ExplanationParameters
    ("ExplanationParameters", "sampled_shapley_attribution"): honoured("read in registry/explain.py"),
    # -- SampledShapleyAttribution
    ("SampledShapleyAttribution", "path_count"): honoured("read in registry/explain.py"),
    # -- ExplanationParameters
    ("ExplanationParameters", "integrated_gradients_attribution"): honoured("read in registry/explain.py"),
    # -- IntegratedGradientsAttribution
    ("IntegratedGradientsAttribution", "step_count"): undecided("name too common to trace (quoted in training/tuning.py, studies/ranking.py); unverified"),
    ("IntegratedGradientsAttribution", "smooth_grad_config"): undecided("read by nothing"),
    # -- SmoothGradConfig
    ("SmoothGradConfig", "noise_sigma"): undecided("read by nothing"),
    ("SmoothGradConfig", "feature_noise_sigma"): undecided("read by nothing"),
    # -- FeatureNoiseSigma
    ("FeatureNoiseSigma", "noise_sigma"): undecided("read by nothing"),
    # -- FeatureNoiseSigma.NoiseSigmaForFeature
    ("FeatureNoiseSigma.NoiseSigmaForFeature", "name"): undecided("name too common to trace (quoted in persistent_resources/jobs.py, persistent_resources/rules.py ...); unverified"),
    ("FeatureNoiseSigma.NoiseSigmaForFeature", "sigma"): undecided("read by nothing"),
    # -- SmoothGradConfig
    ("SmoothGradConfig", "noisy_sample_count"): undecided("read by nothing"),
    # -- IntegratedGradientsAttribution
    ("IntegratedGradientsAttribution", "blur_baseline_config"): undecided("read by nothing"),
    # -- BlurBaselineConfig
    ("BlurBaselineConfig", "max_blur_sigma"): undecided("read by nothing"),
    # -- ExplanationParameters
    ("ExplanationParameters", "xrai_attribution"): honoured("read in registry/explain.py"),
    # -- XraiAttribution
    ("XraiAttribution", "step_count"): undecided("name too common to trace (quoted in training/tuning.py, studies/ranking.py); unverified"),
    ("XraiAttribution", "smooth_grad_config"): undecided("read by nothing"),
    ("XraiAttribution", "blur_baseline_config"): undecided("read by nothing"),
    # -- ExplanationParameters
    ("ExplanationParameters", "examples"): honoured("read in registry/explain.py"),
    # -- Examples
    ("Examples", "example_gcs_source"): undecided("read by nothing"),
    # -- Examples.ExampleGcsSource
    ("Examples.ExampleGcsSource", "data_format"): undecided("read by nothing"),
    ("Examples.ExampleGcsSource", "gcs_source"): honoured("read in batch_prediction/run.py, datasets/sources.py ..."),
    # -- GcsSource
    ("GcsSource", "uris"): undecided("name too common to trace (quoted in batch_prediction/run.py, datasets/transfer.py); unverified"),
    # -- Examples
    ("Examples", "nearest_neighbor_search_config"): undecided("read by nothing"),
    ("Examples", "presets"): undecided("read by nothing"),
    # -- Presets
    ("Presets", "query"): undecided("read by nothing"),
    ("Presets", "modality"): undecided("read by nothing"),
    # -- Examples
    ("Examples", "neighbor_count"): undecided("read by nothing"),
    # -- ExplanationParameters
    ("ExplanationParameters", "top_k"): honoured("read in registry/explain.py"),
    ("ExplanationParameters", "output_indices"): honoured("read in registry/explain.py"),
    # -- ExplanationSpec
    ("ExplanationSpec", "metadata"): undecided("name too common to trace (quoted in tensorboards/routes.py, tensorboards/batches.py ...); unverified"),
    # -- ExplanationMetadata
    ("ExplanationMetadata", "inputs"): undecided("name too common to trace (quoted in pipelines/driver.py, registry/explain.py); unverified"),
    # -- ExplanationMetadata.InputMetadata
    ("ExplanationMetadata.InputMetadata", "input_baselines"): honoured("read in registry/explain.py"),
    ("ExplanationMetadata.InputMetadata", "input_tensor_name"): undecided("read by nothing"),
    ("ExplanationMetadata.InputMetadata", "encoding"): undecided("read by nothing"),
    ("ExplanationMetadata.InputMetadata", "modality"): undecided("read by nothing"),
    ("ExplanationMetadata.InputMetadata", "feature_value_domain"): undecided("read by nothing"),
    # -- ExplanationMetadata.InputMetadata.FeatureValueDomain
    ("ExplanationMetadata.InputMetadata.FeatureValueDomain", "min_value"): undecided("name too common to trace (quoted in training/tuning.py, studies/optimizer.py ...); unverified"),
    ("ExplanationMetadata.InputMetadata.FeatureValueDomain", "max_value"): undecided("name too common to trace (quoted in training/tuning.py, studies/optimizer.py ...); unverified"),
    ("ExplanationMetadata.InputMetadata.FeatureValueDomain", "original_mean"): undecided("read by nothing"),
    ("ExplanationMetadata.InputMetadata.FeatureValueDomain", "original_stddev"): undecided("read by nothing"),
    # -- ExplanationMetadata.InputMetadata
    ("ExplanationMetadata.InputMetadata", "indices_tensor_name"): undecided("read by nothing"),
    ("ExplanationMetadata.InputMetadata", "dense_shape_tensor_name"): undecided("read by nothing"),
    ("ExplanationMetadata.InputMetadata", "index_feature_mapping"): undecided("read by nothing"),
    ("ExplanationMetadata.InputMetadata", "encoded_tensor_name"): undecided("read by nothing"),
    ("ExplanationMetadata.InputMetadata", "encoded_baselines"): undecided("read by nothing"),
    ("ExplanationMetadata.InputMetadata", "visualization"): undecided("read by nothing"),
    # -- ExplanationMetadata.InputMetadata.Visualization
    ("ExplanationMetadata.InputMetadata.Visualization", "type_"): undecided("name too common to trace (quoted in training/runner.py); unverified"),
    ("ExplanationMetadata.InputMetadata.Visualization", "polarity"): undecided("read by nothing"),
    ("ExplanationMetadata.InputMetadata.Visualization", "color_map"): undecided("read by nothing"),
    ("ExplanationMetadata.InputMetadata.Visualization", "clip_percent_upperbound"): undecided("read by nothing"),
    ("ExplanationMetadata.InputMetadata.Visualization", "clip_percent_lowerbound"): undecided("read by nothing"),
    ("ExplanationMetadata.InputMetadata.Visualization", "overlay_type"): undecided("read by nothing"),
    # -- ExplanationMetadata.InputMetadata
    ("ExplanationMetadata.InputMetadata", "group_name"): undecided("read by nothing"),
    # -- ExplanationMetadata
    ("ExplanationMetadata", "outputs"): undecided("name too common to trace (quoted in pipelines/driver.py, pipelines/task_main.py ...); unverified"),
    # -- ExplanationMetadata.OutputMetadata
    ("ExplanationMetadata.OutputMetadata", "index_display_name_mapping"): undecided("read by nothing"),
    ("ExplanationMetadata.OutputMetadata", "display_name_mapping_key"): undecided("read by nothing"),
    ("ExplanationMetadata.OutputMetadata", "output_tensor_name"): undecided("read by nothing"),
    # -- ExplanationMetadata
    ("ExplanationMetadata", "feature_attributions_schema_uri"): undecided("read by nothing"),
    ("ExplanationMetadata", "latent_space_source"): undecided("read by nothing"),
    # -- Model
    ("Model", "etag"): undecided("name too common to trace (quoted in tensorboards/batches.py, datasets/routes.py ...); unverified"),
    ("Model", "labels"): honoured("stored and answered back on get/list, as Vertex does"),
    ("Model", "data_stats"): undecided("read by nothing"),
    # -- Model.DataStats
    ("Model.DataStats", "training_data_items_count"): undecided("read by nothing"),
    ("Model.DataStats", "validation_data_items_count"): undecided("read by nothing"),
    ("Model.DataStats", "test_data_items_count"): undecided("read by nothing"),
    ("Model.DataStats", "training_annotations_count"): undecided("read by nothing"),
    ("Model.DataStats", "validation_annotations_count"): undecided("read by nothing"),
    ("Model.DataStats", "test_annotations_count"): undecided("read by nothing"),
    # -- Model
    ("Model", "encryption_spec"): undecided(NOT_LOGGED),
    ("Model", "base_model_source"): undecided("read by nothing"),
    # -- Model.BaseModelSource
    ("Model.BaseModelSource", "model_garden_source"): undecided("read by nothing"),
    # -- ModelGardenSource
    ("ModelGardenSource", "public_model_name"): undecided("read by nothing"),
    ("ModelGardenSource", "version_id"): honoured("read in batch_prediction/routes.py, registry/transfer.py ..."),
    ("ModelGardenSource", "skip_hf_model_cache"): undecided("read by nothing"),
    # -- Model.BaseModelSource
    ("Model.BaseModelSource", "genie_source"): undecided("read by nothing"),
    # -- GenieSource
    ("GenieSource", "base_model_uri"): undecided("read by nothing"),
    # -- Model
    # -- Checkpoint
    # -- TrainingPipeline
    ("TrainingPipeline", "model_id"): honoured("read in training_pipelines/routes.py, training_pipelines/run.py"),
    ("TrainingPipeline", "parent_model"): honoured("read in training_pipelines/routes.py, training_pipelines/run.py"),
    ("TrainingPipeline", "labels"): honoured("stored and answered back on get/list, as Vertex does"),
    ("TrainingPipeline", "encryption_spec"): undecided(NOT_LOGGED),
    # -- Endpoint
    ("Endpoint", "display_name"): honoured("stored and answered back on get/list, as Vertex does"),
    ("Endpoint", "description"): honoured("stored and answered back on get/list, as Vertex does"),
    ("Endpoint", "traffic_split"): honoured("read in registry/endpoints.py"),
    ("Endpoint", "etag"): undecided("name too common to trace (quoted in tensorboards/batches.py, datasets/routes.py ...); unverified"),
    ("Endpoint", "labels"): honoured("stored and answered back on get/list, as Vertex does"),
    ("Endpoint", "encryption_spec"): undecided(NOT_LOGGED),
    ("Endpoint", "network"): undecided(NOT_LOGGED),
    ("Endpoint", "enable_private_service_connect"): undecided("read by nothing"),
    ("Endpoint", "private_service_connect_config"): undecided("read by nothing"),
    # -- PrivateServiceConnectConfig
    ("PrivateServiceConnectConfig", "enable_private_service_connect"): undecided("read by nothing"),
    ("PrivateServiceConnectConfig", "project_allowlist"): undecided("read by nothing"),
    ("PrivateServiceConnectConfig", "psc_automation_configs"): undecided("read by nothing"),
    # -- PSCAutomationConfig
    ("PSCAutomationConfig", "project_id"): undecided("read by nothing"),
    ("PSCAutomationConfig", "network"): undecided(NOT_LOGGED),
    # -- Endpoint
    ("Endpoint", "predict_request_response_logging_config"): undecided("read by nothing"),
    # -- PredictRequestResponseLoggingConfig
    ("PredictRequestResponseLoggingConfig", "enabled"): undecided("read by nothing"),
    ("PredictRequestResponseLoggingConfig", "sampling_rate"): undecided("read by nothing"),
    ("PredictRequestResponseLoggingConfig", "bigquery_destination"): honoured("read in batch_prediction/run.py, datasets/export.py"),
    # -- Endpoint
    ("Endpoint", "dedicated_endpoint_enabled"): undecided("read by nothing"),
    ("Endpoint", "client_connection_config"): honoured("read in registry/endpoint_changes.py, registry/endpoints.py"),
    # -- ClientConnectionConfig
    ("ClientConnectionConfig", "inference_timeout"): honoured("read in registry/endpoints.py"),
    # -- Endpoint
    ("Endpoint", "gen_ai_advanced_features_config"): undecided("read by nothing"),
    # -- GenAiAdvancedFeaturesConfig
    ("GenAiAdvancedFeaturesConfig", "rag_config"): undecided("read by nothing"),
    # -- GenAiAdvancedFeaturesConfig.RagConfig
    ("GenAiAdvancedFeaturesConfig.RagConfig", "enable_rag"): undecided("read by nothing"),
    # -- Endpoint
    ("Endpoint", "private_model_server_enabled"): undecided("read by nothing"),
    # -- DeployedModel
    ("DeployedModel", "dedicated_resources"): honoured("read in batch_prediction/run.py, registry/endpoint_changes.py ..."),
    # -- DedicatedResources
    ("DedicatedResources", "machine_spec"): honoured("read in persistent_resources/jobs.py, persistent_resources/rules.py ..."),
    ("DedicatedResources", "min_replica_count"): honoured("read in persistent_resources/rules.py, registry/endpoint_changes.py ..."),
    ("DedicatedResources", "max_replica_count"): honoured("read in persistent_resources/jobs.py, persistent_resources/rules.py ..."),
    ("DedicatedResources", "required_replica_count"): undecided("read by nothing"),
    ("DedicatedResources", "autoscaling_metric_specs"): honoured("read in deployment_resource_pools/routes.py"),
    # -- AutoscalingMetricSpec
    ("AutoscalingMetricSpec", "metric_name"): undecided("read by nothing"),
    ("AutoscalingMetricSpec", "target"): undecided("read by nothing"),
    # -- DedicatedResources
    ("DedicatedResources", "spot"): undecided("read by nothing"),
    # -- DeployedModel
    ("DeployedModel", "automatic_resources"): honoured("read in registry/endpoint_changes.py, registry/endpoints.py"),
    # -- AutomaticResources
    ("AutomaticResources", "min_replica_count"): honoured("read in persistent_resources/rules.py, registry/endpoint_changes.py ..."),
    ("AutomaticResources", "max_replica_count"): honoured("read in persistent_resources/jobs.py, persistent_resources/rules.py ..."),
    # -- DeployedModel
    ("DeployedModel", "shared_resources"): honoured("read in registry/endpoints.py, deployment_resource_pools/routes.py"),
    ("DeployedModel", "id"): honoured("read in persistent_resources/rules.py, training/tuning.py ..."),
    ("DeployedModel", "model"): honoured("read in training_pipelines/run.py, batch_prediction/routes.py ..."),
    ("DeployedModel", "display_name"): honoured("stored and answered back on get/list, as Vertex does"),
    ("DeployedModel", "explanation_spec"): honoured("read in registry/explain.py"),
    ("DeployedModel", "disable_explanations"): honoured("read in registry/explain.py"),
    ("DeployedModel", "service_account"): undecided(NOT_LOGGED),
    ("DeployedModel", "disable_container_logging"): honoured("read in deployment_resource_pools/routes.py"),
    ("DeployedModel", "enable_access_logging"): undecided("read by nothing"),
    ("DeployedModel", "faster_deployment_config"): undecided("read by nothing"),
    # -- FasterDeploymentConfig
    ("FasterDeploymentConfig", "fast_tryout_enabled"): undecided("read by nothing"),
    # -- DeployedModel
    ("DeployedModel", "system_labels"): undecided("read by nothing"),
    ("DeployedModel", "checkpoint_id"): undecided("read by nothing"),
    ("DeployedModel", "speculative_decoding_spec"): undecided("read by nothing"),
    # -- SpeculativeDecodingSpec
    ("SpeculativeDecodingSpec", "draft_model_speculation"): undecided("read by nothing"),
    # -- SpeculativeDecodingSpec.DraftModelSpeculation
    ("SpeculativeDecodingSpec.DraftModelSpeculation", "draft_model"): undecided("read by nothing"),
    # -- SpeculativeDecodingSpec
    ("SpeculativeDecodingSpec", "ngram_speculation"): undecided("read by nothing"),
    # -- SpeculativeDecodingSpec.NgramSpeculation
    ("SpeculativeDecodingSpec.NgramSpeculation", "ngram_size"): undecided("read by nothing"),
    # -- SpeculativeDecodingSpec
    ("SpeculativeDecodingSpec", "speculative_token_count"): undecided("read by nothing"),
    # -- BatchPredictionJob
    ("BatchPredictionJob", "display_name"): honoured("stored and answered back on get/list, as Vertex does"),
    ("BatchPredictionJob", "model"): honoured("read in training_pipelines/run.py, batch_prediction/routes.py ..."),
    ("BatchPredictionJob", "unmanaged_container_model"): undecided("read by nothing"),
    # -- UnmanagedContainerModel
    ("UnmanagedContainerModel", "artifact_uri"): honoured("read in training_pipelines/run.py, backend.py ..."),
    ("UnmanagedContainerModel", "predict_schemata"): undecided("read by nothing"),
    ("UnmanagedContainerModel", "container_spec"): honoured("read in training_pipelines/run.py, training/execution.py ..."),
    # -- BatchPredictionJob
    ("BatchPredictionJob", "input_config"): honoured("read in batch_prediction/routes.py, batch_prediction/run.py ..."),
    # -- BatchPredictionJob.InputConfig
    ("BatchPredictionJob.InputConfig", "gcs_source"): honoured("read in batch_prediction/run.py, datasets/sources.py ..."),
    ("BatchPredictionJob.InputConfig", "bigquery_source"): honoured("read in batch_prediction/run.py, datasets/sources.py"),
    # -- BigQuerySource
    ("BigQuerySource", "input_uri"): honoured("read in batch_prediction/run.py"),
    # -- BatchPredictionJob.InputConfig
    ("BatchPredictionJob.InputConfig", "vertex_multimodal_dataset_source"): undecided("read by nothing"),
    # -- VertexMultimodalDatasetSource
    ("VertexMultimodalDatasetSource", "dataset_name"): undecided("read by nothing"),
    # -- BatchPredictionJob.InputConfig
    ("BatchPredictionJob.InputConfig", "instances_format"): honoured("read in batch_prediction/routes.py, batch_prediction/run.py"),
    # -- BatchPredictionJob
    ("BatchPredictionJob", "instance_config"): honoured("read in batch_prediction/run.py"),
    # -- BatchPredictionJob.InstanceConfig
    ("BatchPredictionJob.InstanceConfig", "instance_type"): honoured("read in batch_prediction/instances.py"),
    ("BatchPredictionJob.InstanceConfig", "key_field"): honoured("read in batch_prediction/instances.py"),
    ("BatchPredictionJob.InstanceConfig", "included_fields"): honoured("read in batch_prediction/instances.py"),
    ("BatchPredictionJob.InstanceConfig", "excluded_fields"): honoured("read in batch_prediction/instances.py"),
    # -- BatchPredictionJob
    ("BatchPredictionJob", "model_parameters"): honoured("read in batch_prediction/run.py"),
    ("BatchPredictionJob", "output_config"): honoured("read in batch_prediction/run.py"),
    # -- BatchPredictionJob.OutputConfig
    ("BatchPredictionJob.OutputConfig", "gcs_destination"): honoured("read in batch_prediction/run.py, datasets/export.py ..."),
    ("BatchPredictionJob.OutputConfig", "bigquery_destination"): honoured("read in batch_prediction/run.py, datasets/export.py"),
    ("BatchPredictionJob.OutputConfig", "vertex_multimodal_dataset_destination"): undecided("read by nothing"),
    # -- VertexMultimodalDatasetDestination
    ("VertexMultimodalDatasetDestination", "bigquery_destination"): honoured("read in batch_prediction/run.py, datasets/export.py"),
    ("VertexMultimodalDatasetDestination", "display_name"): honoured("stored and answered back on get/list, as Vertex does"),
    # -- BatchPredictionJob.OutputConfig
    ("BatchPredictionJob.OutputConfig", "predictions_format"): honoured("read in batch_prediction/run.py"),
    # -- BatchPredictionJob
    ("BatchPredictionJob", "dedicated_resources"): honoured("read in batch_prediction/run.py, registry/endpoint_changes.py ..."),
    # -- BatchDedicatedResources
    ("BatchDedicatedResources", "machine_spec"): honoured("read in persistent_resources/jobs.py, persistent_resources/rules.py ..."),
    ("BatchDedicatedResources", "starting_replica_count"): honoured("read in batch_prediction/run.py"),
    ("BatchDedicatedResources", "max_replica_count"): honoured("read in persistent_resources/jobs.py, persistent_resources/rules.py ..."),
    # -- BatchPredictionJob
    ("BatchPredictionJob", "service_account"): undecided(NOT_LOGGED),
    ("BatchPredictionJob", "manual_batch_tuning_parameters"): honoured("read in batch_prediction/run.py"),
    # -- ManualBatchTuningParameters
    ("ManualBatchTuningParameters", "batch_size"): honoured("read in batch_prediction/worker.py, batch_prediction/run.py"),
    # -- BatchPredictionJob
    ("BatchPredictionJob", "generate_explanation"): undecided("read by nothing"),
    ("BatchPredictionJob", "explanation_spec"): honoured("read in registry/explain.py"),
    ("BatchPredictionJob", "labels"): honoured("stored and answered back on get/list, as Vertex does"),
    ("BatchPredictionJob", "encryption_spec"): undecided(NOT_LOGGED),
    ("BatchPredictionJob", "disable_container_logging"): honoured("read in deployment_resource_pools/routes.py"),
    # -- Dataset
    ("Dataset", "display_name"): honoured("stored and answered back on get/list, as Vertex does"),
    ("Dataset", "description"): honoured("stored and answered back on get/list, as Vertex does"),
    ("Dataset", "metadata_schema_uri"): undecided("only vertexkit.specs validates it; nothing here acts on it"),
    ("Dataset", "metadata"): undecided("name too common to trace (quoted in tensorboards/routes.py, tensorboards/batches.py ...); unverified"),
    ("Dataset", "etag"): undecided("name too common to trace (quoted in tensorboards/batches.py, datasets/routes.py ...); unverified"),
    ("Dataset", "labels"): honoured("stored and answered back on get/list, as Vertex does"),
    ("Dataset", "saved_queries"): undecided("read by nothing"),
    # -- SavedQuery
    ("SavedQuery", "display_name"): honoured("stored and answered back on get/list, as Vertex does"),
    ("SavedQuery", "metadata"): undecided("name too common to trace (quoted in tensorboards/routes.py, tensorboards/batches.py ...); unverified"),
    ("SavedQuery", "problem_type"): undecided("read by nothing"),
    ("SavedQuery", "etag"): undecided("name too common to trace (quoted in tensorboards/batches.py, datasets/routes.py ...); unverified"),
    # -- Dataset
    ("Dataset", "encryption_spec"): undecided(NOT_LOGGED),
    ("Dataset", "model_reference"): honoured("read in datasets/versions.py"),
    # -- DatasetVersion
    ("DatasetVersion", "etag"): undecided("name too common to trace (quoted in tensorboards/batches.py, datasets/routes.py ...); unverified"),
    ("DatasetVersion", "display_name"): honoured("stored and answered back on get/list, as Vertex does"),
    # -- PipelineJob
    ("PipelineJob", "display_name"): honoured("stored and answered back on get/list, as Vertex does"),
    ("PipelineJob", "pipeline_spec"): honoured("read in pipelines/driver.py, pipelines/routes.py ..."),
    ("PipelineJob", "labels"): honoured("stored and answered back on get/list, as Vertex does"),
    ("PipelineJob", "runtime_config"): honoured("read in pipelines/routes.py, pipelines/runner.py ..."),
    # -- PipelineJob.RuntimeConfig
    ("PipelineJob.RuntimeConfig", "parameters"): undecided("name too common to trace (quoted in training/tuning.py, pipelines/driver.py ...); unverified"),
    # -- Value
    ("Value", "int_value"): undecided("read by nothing"),
    ("Value", "double_value"): undecided("read by nothing"),
    ("Value", "string_value"): undecided("read by nothing"),
    # -- PipelineJob.RuntimeConfig
    ("PipelineJob.RuntimeConfig", "gcs_output_directory"): honoured("read in pipelines/routes.py, batch_prediction/run.py"),
    ("PipelineJob.RuntimeConfig", "parameter_values"): honoured("read in pipelines/driver.py, pipelines/routes.py ..."),
    ("PipelineJob.RuntimeConfig", "failure_policy"): undecided("read by nothing"),
    ("PipelineJob.RuntimeConfig", "input_artifacts"): undecided("read by nothing"),
    # -- PipelineJob.RuntimeConfig.InputArtifact
    ("PipelineJob.RuntimeConfig.InputArtifact", "artifact_id"): honoured("read in metadata/routes.py"),
    # -- PipelineJob
    ("PipelineJob", "encryption_spec"): honoured("its key fills {{$.pipeline_encryption_key_name}} (pipelines/placeholders.py)"),
    ("PipelineJob", "service_account"): honoured("fills {{$.pipeline_service_account}} (pipelines/placeholders.py)"),
    ("PipelineJob", "network"): honoured("fills {{$.pipeline_network}} (pipelines/placeholders.py)"),
    ("PipelineJob", "reserved_ip_ranges"): undecided("read by nothing; " + NOT_LOGGED),
    ("PipelineJob", "psc_interface_config"): undecided("read by nothing"),
    ("PipelineJob", "template_uri"): undecided("read by nothing"),
    ("PipelineJob", "preflight_validations"): undecided("read by nothing"),
    # -- Schedule
    ("Schedule", "cron"): honoured("read in pipelines/routes.py, pipelines/scheduler.py"),
    ("Schedule", "create_pipeline_job_request"): honoured("read in pipelines/routes.py"),
    # -- CreatePipelineJobRequest
    ("CreatePipelineJobRequest", "parent"): honoured("read in tensorboards/batches.py, pipelines/routes.py"),
    ("CreatePipelineJobRequest", "pipeline_job"): honoured("read in pipelines/routes.py"),
    ("CreatePipelineJobRequest", "pipeline_job_id"): honoured("read in pipelines/routes.py"),
    # -- Schedule
    ("Schedule", "create_notebook_execution_job_request"): honoured("read in pipelines/routes.py"),
    # -- CreateNotebookExecutionJobRequest
    ("CreateNotebookExecutionJobRequest", "parent"): honoured("read in tensorboards/batches.py, pipelines/routes.py"),
    ("CreateNotebookExecutionJobRequest", "notebook_execution_job"): undecided("read by nothing"),
    # -- NotebookExecutionJob
    ("NotebookExecutionJob", "dataform_repository_source"): undecided("read by nothing"),
    # -- NotebookExecutionJob.DataformRepositorySource
    ("NotebookExecutionJob.DataformRepositorySource", "dataform_repository_resource_name"): undecided("read by nothing"),
    ("NotebookExecutionJob.DataformRepositorySource", "commit_sha"): undecided("read by nothing"),
    # -- NotebookExecutionJob
    ("NotebookExecutionJob", "gcs_notebook_source"): undecided("read by nothing"),
    # -- NotebookExecutionJob.GcsNotebookSource
    ("NotebookExecutionJob.GcsNotebookSource", "uri"): undecided("name too common to trace (quoted in pipelines/driver.py, datasets/sources.py ...); unverified"),
    ("NotebookExecutionJob.GcsNotebookSource", "generation"): undecided("read by nothing"),
    # -- NotebookExecutionJob
    ("NotebookExecutionJob", "direct_notebook_source"): undecided("read by nothing"),
    # -- NotebookExecutionJob.DirectNotebookSource
    ("NotebookExecutionJob.DirectNotebookSource", "content"): undecided("read by nothing"),
    # -- NotebookExecutionJob
    ("NotebookExecutionJob", "notebook_runtime_template_resource_name"): undecided("read by nothing"),
    ("NotebookExecutionJob", "custom_environment_spec"): undecided("read by nothing"),
    # -- NotebookExecutionJob.CustomEnvironmentSpec
    ("NotebookExecutionJob.CustomEnvironmentSpec", "machine_spec"): honoured("read in persistent_resources/jobs.py, persistent_resources/rules.py ..."),
    ("NotebookExecutionJob.CustomEnvironmentSpec", "persistent_disk_spec"): undecided("read by nothing"),
    # -- PersistentDiskSpec
    ("PersistentDiskSpec", "disk_type"): undecided("read by nothing"),
    ("PersistentDiskSpec", "disk_size_gb"): undecided("read by nothing"),
    # -- NotebookExecutionJob.CustomEnvironmentSpec
    ("NotebookExecutionJob.CustomEnvironmentSpec", "network_spec"): undecided("read by nothing"),
    # -- NetworkSpec
    ("NetworkSpec", "enable_internet_access"): undecided("read by nothing"),
    ("NetworkSpec", "network"): undecided(NOT_LOGGED),
    ("NetworkSpec", "subnetwork"): undecided("read by nothing"),
    # -- NotebookExecutionJob
    ("NotebookExecutionJob", "gcs_output_uri"): undecided("read by nothing"),
    ("NotebookExecutionJob", "execution_user"): undecided("read by nothing"),
    ("NotebookExecutionJob", "service_account"): undecided(NOT_LOGGED),
    ("NotebookExecutionJob", "workbench_runtime"): undecided("read by nothing"),
    ("NotebookExecutionJob", "display_name"): honoured("stored and answered back on get/list, as Vertex does"),
    ("NotebookExecutionJob", "execution_timeout"): undecided("read by nothing"),
    ("NotebookExecutionJob", "schedule_resource_name"): undecided("read by nothing"),
    ("NotebookExecutionJob", "labels"): honoured("stored and answered back on get/list, as Vertex does"),
    ("NotebookExecutionJob", "kernel_name"): undecided("read by nothing"),
    ("NotebookExecutionJob", "encryption_spec"): undecided(NOT_LOGGED),
    # -- CreateNotebookExecutionJobRequest
    ("CreateNotebookExecutionJobRequest", "notebook_execution_job_id"): undecided("read by nothing"),
    # -- Schedule
    ("Schedule", "name"): undecided("name too common to trace (quoted in persistent_resources/jobs.py, persistent_resources/rules.py ...); unverified"),
    ("Schedule", "display_name"): honoured("stored and answered back on get/list, as Vertex does"),
    ("Schedule", "start_time"): honoured("read in persistent_resources/rules.py, persistent_resources/routes.py ..."),
    ("Schedule", "end_time"): honoured("read in training_pipelines/models.py, training/routes.py ..."),
    ("Schedule", "max_run_count"): honoured("read in pipelines/routes.py, pipelines/scheduler.py"),
    ("Schedule", "max_concurrent_run_count"): honoured("read in pipelines/routes.py, pipelines/scheduler.py"),
    ("Schedule", "max_concurrent_active_run_count"): honoured("read in pipelines/routes.py"),
    ("Schedule", "allow_queueing"): honoured("read in pipelines/routes.py, pipelines/scheduler.py"),
    # -- Study
    ("Study", "display_name"): honoured("stored and answered back on get/list, as Vertex does"),
    ("Study", "study_spec"): honoured("read in training/routes.py, training/tuning.py ..."),
    # -- PersistentResource
    ("PersistentResource", "name"): undecided("name too common to trace (quoted in persistent_resources/jobs.py, persistent_resources/rules.py ...); unverified"),
    ("PersistentResource", "display_name"): honoured("stored and answered back on get/list, as Vertex does"),
    ("PersistentResource", "resource_pools"): honoured("read in persistent_resources/jobs.py, persistent_resources/rules.py ..."),
    # -- ResourcePool
    ("ResourcePool", "id"): honoured("read in persistent_resources/rules.py, training/tuning.py ..."),
    ("ResourcePool", "machine_spec"): honoured("read in persistent_resources/jobs.py, persistent_resources/rules.py ..."),
    ("ResourcePool", "replica_count"): honoured("read in persistent_resources/jobs.py, persistent_resources/rules.py ..."),
    ("ResourcePool", "disk_spec"): honoured("read in persistent_resources/rules.py"),
    ("ResourcePool", "autoscaling_spec"): honoured("read in persistent_resources/jobs.py, persistent_resources/rules.py"),
    # -- ResourcePool.AutoscalingSpec
    ("ResourcePool.AutoscalingSpec", "min_replica_count"): honoured("read in persistent_resources/rules.py, registry/endpoint_changes.py ..."),
    ("ResourcePool.AutoscalingSpec", "max_replica_count"): honoured("read in persistent_resources/jobs.py, persistent_resources/rules.py ..."),
    # -- PersistentResource
    ("PersistentResource", "labels"): honoured("stored and answered back on get/list, as Vertex does"),
    ("PersistentResource", "network"): honoured("a job placed on it must match it, else 400 (persistent_resources/jobs.py)"),
    ("PersistentResource", "psc_interface_config"): undecided("read by nothing"),
    ("PersistentResource", "encryption_spec"): honoured("a job placed on it must match it, else 400 (persistent_resources/jobs.py)"),
    ("PersistentResource", "resource_runtime_spec"): honoured("read in persistent_resources/jobs.py, persistent_resources/rules.py"),
    # -- ResourceRuntimeSpec
    ("ResourceRuntimeSpec", "service_account_spec"): honoured("read in persistent_resources/jobs.py"),
    # -- ServiceAccountSpec
    ("ServiceAccountSpec", "enable_custom_service_account"): honoured("a job placed on it must name a serviceAccount, else 400 (persistent_resources/jobs.py)"),
    ("ServiceAccountSpec", "service_account"): undecided("stored; jobs.py reads the job's serviceAccount, not this default"),
    # -- ResourceRuntimeSpec
    ("ResourceRuntimeSpec", "ray_spec"): honoured("read in persistent_resources/rules.py"),
    # -- RaySpec
    ("RaySpec", "image_uri"): honoured("read in training/execution.py, backend.py ..."),
    ("RaySpec", "resource_pool_images"): undecided("read by nothing"),
    ("RaySpec", "head_node_resource_pool_id"): undecided("read by nothing"),
    ("RaySpec", "ray_metric_spec"): undecided("read by nothing"),
    # -- RayMetricSpec
    ("RayMetricSpec", "disabled"): undecided("read by nothing"),
    # -- RaySpec
    ("RaySpec", "ray_logs_spec"): undecided("read by nothing"),
    # -- RayLogsSpec
    ("RayLogsSpec", "disabled"): undecided("read by nothing"),
    # -- PersistentResource
    ("PersistentResource", "reserved_ip_ranges"): undecided("read by nothing; " + NOT_LOGGED),
    # -- DeploymentResourcePool
    ("DeploymentResourcePool", "name"): undecided("name too common to trace (quoted in persistent_resources/jobs.py, persistent_resources/rules.py ...); unverified"),
    ("DeploymentResourcePool", "dedicated_resources"): honoured("read in batch_prediction/run.py, registry/endpoint_changes.py ..."),
    ("DeploymentResourcePool", "encryption_spec"): undecided("stored and answered back (deployment_resource_pools/routes.py); " + NOT_LOGGED),
    ("DeploymentResourcePool", "service_account"): undecided("stored and answered back (deployment_resource_pools/routes.py); " + NOT_LOGGED),
    ("DeploymentResourcePool", "disable_container_logging"): honoured("read in deployment_resource_pools/routes.py"),
    # -- Tensorboard
    ("Tensorboard", "display_name"): honoured("stored and answered back on get/list, as Vertex does"),
    ("Tensorboard", "description"): honoured("stored and answered back on get/list, as Vertex does"),
    ("Tensorboard", "encryption_spec"): undecided(NOT_LOGGED),
    ("Tensorboard", "labels"): honoured("stored and answered back on get/list, as Vertex does"),
    ("Tensorboard", "etag"): undecided("name too common to trace (quoted in tensorboards/batches.py, datasets/routes.py ...); unverified"),
    ("Tensorboard", "is_default"): honoured("read in tensorboards/routes.py, core/filters.py"),
    # -- TensorboardExperiment
    ("TensorboardExperiment", "display_name"): honoured("stored and answered back on get/list, as Vertex does"),
    ("TensorboardExperiment", "description"): honoured("stored and answered back on get/list, as Vertex does"),
    ("TensorboardExperiment", "labels"): honoured("stored and answered back on get/list, as Vertex does"),
    ("TensorboardExperiment", "etag"): undecided("name too common to trace (quoted in tensorboards/batches.py, datasets/routes.py ...); unverified"),
    ("TensorboardExperiment", "source"): undecided("name too common to trace (quoted in tensorboards/routes.py); unverified"),
    # -- TensorboardRun
    ("TensorboardRun", "display_name"): honoured("stored and answered back on get/list, as Vertex does"),
    ("TensorboardRun", "description"): honoured("stored and answered back on get/list, as Vertex does"),
    ("TensorboardRun", "labels"): honoured("stored and answered back on get/list, as Vertex does"),
    ("TensorboardRun", "etag"): undecided("name too common to trace (quoted in tensorboards/batches.py, datasets/routes.py ...); unverified"),
    # -- TensorboardTimeSeries
    ("TensorboardTimeSeries", "display_name"): honoured("stored and answered back on get/list, as Vertex does"),
    ("TensorboardTimeSeries", "description"): honoured("stored and answered back on get/list, as Vertex does"),
    ("TensorboardTimeSeries", "value_type"): honoured("read in tensorboards/reads.py, tensorboards/batches.py ..."),
    ("TensorboardTimeSeries", "etag"): undecided("name too common to trace (quoted in tensorboards/batches.py, datasets/routes.py ...); unverified"),
    ("TensorboardTimeSeries", "plugin_name"): honoured("read in tensorboards/batches.py"),
    ("TensorboardTimeSeries", "plugin_data"): honoured("read in tensorboards/batches.py"),
    # -- Context
    ("Context", "name"): undecided("name too common to trace (quoted in persistent_resources/jobs.py, persistent_resources/rules.py ...); unverified"),
    ("Context", "display_name"): honoured("stored and answered back on get/list, as Vertex does"),
    ("Context", "etag"): undecided("name too common to trace (quoted in tensorboards/batches.py, datasets/routes.py ...); unverified"),
    ("Context", "labels"): honoured("stored and answered back on get/list, as Vertex does"),
    ("Context", "schema_title"): honoured("read in pipelines/driver.py, pipelines/runner.py ..."),
    ("Context", "schema_version"): honoured("read in metadata/schemas.py, pipelines/driver.py ..."),
    ("Context", "metadata"): undecided("name too common to trace (quoted in tensorboards/routes.py, tensorboards/batches.py ...); unverified"),
    ("Context", "description"): honoured("stored and answered back on get/list, as Vertex does"),
    # -- Artifact
    ("Artifact", "display_name"): honoured("stored and answered back on get/list, as Vertex does"),
    ("Artifact", "uri"): undecided("name too common to trace (quoted in pipelines/driver.py, datasets/sources.py ...); unverified"),
    ("Artifact", "etag"): undecided("name too common to trace (quoted in tensorboards/batches.py, datasets/routes.py ...); unverified"),
    ("Artifact", "labels"): honoured("stored and answered back on get/list, as Vertex does"),
    ("Artifact", "state"): undecided("name too common to trace (quoted in persistent_resources/jobs.py, persistent_resources/rules.py ...); unverified"),
    ("Artifact", "schema_title"): honoured("read in pipelines/driver.py, pipelines/runner.py ..."),
    ("Artifact", "schema_version"): honoured("read in metadata/schemas.py, pipelines/driver.py ..."),
    ("Artifact", "metadata"): undecided("name too common to trace (quoted in tensorboards/routes.py, tensorboards/batches.py ...); unverified"),
    ("Artifact", "description"): honoured("stored and answered back on get/list, as Vertex does"),
    # -- Execution
    ("Execution", "display_name"): honoured("stored and answered back on get/list, as Vertex does"),
    ("Execution", "state"): undecided("name too common to trace (quoted in persistent_resources/jobs.py, persistent_resources/rules.py ...); unverified"),
    ("Execution", "etag"): undecided("name too common to trace (quoted in tensorboards/batches.py, datasets/routes.py ...); unverified"),
    ("Execution", "labels"): honoured("stored and answered back on get/list, as Vertex does"),
    ("Execution", "schema_title"): honoured("read in pipelines/driver.py, pipelines/runner.py ..."),
    ("Execution", "schema_version"): honoured("read in metadata/schemas.py, pipelines/driver.py ..."),
    ("Execution", "metadata"): undecided("name too common to trace (quoted in tensorboards/routes.py, tensorboards/batches.py ...); unverified"),
    ("Execution", "description"): honoured("stored and answered back on get/list, as Vertex does"),
    # -- MetadataStore
    ("MetadataStore", "encryption_spec"): undecided(NOT_LOGGED),
    ("MetadataStore", "description"): honoured("stored and answered back on get/list, as Vertex does"),
    ("MetadataStore", "dataplex_config"): undecided("read by nothing"),
    # -- MetadataStore.DataplexConfig
    ("MetadataStore.DataplexConfig", "enabled_pipelines_lineage"): undecided("read by nothing"),
    # -- MetadataSchema
    ("MetadataSchema", "schema_version"): honoured("read in metadata/schemas.py, pipelines/driver.py ..."),
    ("MetadataSchema", "schema"): undecided("name too common to trace (quoted in metadata/schemas.py); unverified"),
    ("MetadataSchema", "schema_type"): undecided("read by nothing"),
    ("MetadataSchema", "description"): honoured("stored and answered back on get/list, as Vertex does"),
}
# fmt: on


def declared() -> dict[tuple[str, str], Disposition]:
    """The table keyed by full message name, with what the areas' code decides over it
    (`decided.py`)."""
    from vertexkit.local.vertex.dispositions.decided import decided

    table = {(PACKAGE + message, field): d for (message, field), d in _TABLE.items()}
    return {**table, **decided()}
