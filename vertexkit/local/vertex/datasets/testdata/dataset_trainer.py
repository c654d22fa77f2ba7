"""Trains a penguin species classifier on the splits Vertex exports from a managed dataset.

Reads AIP_TRAINING_DATA_URI / AIP_TEST_DATA_URI (CSV wildcards, AIP_DATA_FORMAT=csv) with
google-cloud-storage and saves model.joblib to AIP_MODEL_DIR, as a Vertex trainer does.
"""

import io
import os
import tempfile

import joblib
import pandas as pd
from google.cloud import storage
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

FEATURES = ["culmen_length_mm", "culmen_depth_mm", "flipper_length_mm", "body_mass_g"]
client = storage.Client()


def read_csv_split(uri: str) -> pd.DataFrame:
    bucket, _, pattern = uri.removeprefix("gs://").partition("/")
    blobs = client.list_blobs(bucket, prefix=pattern.split("*", 1)[0])
    frames = [pd.read_csv(io.BytesIO(blob.download_as_bytes())) for blob in blobs]
    return pd.concat(frames, ignore_index=True)


assert os.environ["AIP_DATA_FORMAT"] == "csv", os.environ["AIP_DATA_FORMAT"]
train = read_csv_split(os.environ["AIP_TRAINING_DATA_URI"]).dropna(subset=[*FEATURES, "species"])
test = read_csv_split(os.environ["AIP_TEST_DATA_URI"]).dropna(subset=[*FEATURES, "species"])
model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))
model.fit(train[FEATURES].astype(float), train["species"])
accuracy = model.score(test[FEATURES].astype(float), test["species"])
print(f"rows train={len(train)} test={len(test)} accuracy={accuracy:.3f}")
with tempfile.TemporaryDirectory() as scratch:
    path = os.path.join(scratch, "model.joblib")
    joblib.dump(model, path)
    bucket, _, name = (
        (os.environ["AIP_MODEL_DIR"] + "model.joblib").removeprefix("gs://").partition("/")
    )
    client.bucket(bucket).blob(name).upload_from_filename(path)
