"""The training area's collections (their jobs' states are the shared ones in jobs/states.py)."""

CUSTOM_JOBS = "customJobs"
TUNING_JOBS = "hyperparameterTuningJobs"
