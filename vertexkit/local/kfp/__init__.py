"""The Kubeflow Pipelines v2beta1 REST API on the local cloud's port (`/apis/v2beta1/...`), the API
`kfp.Client` and `kfp-server-api` speak. Each KFP run is backed by a local PipelineJob, reached
only through the narrow `PipelineJobs` handle (`jobs.py`)."""
