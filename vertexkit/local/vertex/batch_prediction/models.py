"""Batch prediction jobs' collection, shared with the console (which imports no routes)."""

COLLECTION = "batchPredictionJobs"
KIND = "BatchPredictionJob"
