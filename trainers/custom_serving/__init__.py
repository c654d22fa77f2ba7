"""An example custom serving container: plain HTTP, no framework.

It follows the Vertex AI custom-container contract: listen on AIP_HTTP_PORT, answer health
checks on AIP_HEALTH_ROUTE and predictions on AIP_PREDICT_ROUTE, and load the model from
AIP_STORAGE_URI (a gs:// directory holding model.joblib). Run it as `python -m
trainers.custom_serving`, in a container image or, on the local cloud, as a local process.
"""
