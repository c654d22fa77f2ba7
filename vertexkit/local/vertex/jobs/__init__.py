"""The job machinery every Vertex job type shares: custom jobs, tuning jobs, training pipelines
and batch prediction register their work with one `JobExecutor` (a thread per job, a stop
event for cancel and shutdown, one place that moves a job to its end state) and use the same
JobState values (`states`), `Outcome`, `JobControl` and `JobLog` (`lifecycle`).
"""
