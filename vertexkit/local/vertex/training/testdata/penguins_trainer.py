"""Trains a scikit-learn classifier of penguin species and saves model.joblib to AIP_MODEL_DIR.

Reads the penguins CSV from Cloud Storage (`--data gs://...`) with google-cloud-storage, which
follows STORAGE_EMULATOR_HOST locally and the default credentials on Vertex AI. Reports the
held-out accuracy to hypertune as `accuracy`.
"""

import argparse
import io
import os
import tempfile

import hypertune
import joblib
import pandas as pd
from google.cloud import storage
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

FEATURES = ["bill_length_mm", "bill_depth_mm", "flipper_length_mm", "body_mass_g"]

parser = argparse.ArgumentParser()
parser.add_argument("--data", required=True)
parser.add_argument("--C", type=float, default=1.0)
args = parser.parse_args()

client = storage.Client()


def blob(uri: str) -> storage.Blob:
    bucket, _, name = uri.removeprefix("gs://").partition("/")
    return client.bucket(bucket).blob(name)


frame = pd.read_csv(io.BytesIO(blob(args.data).download_as_bytes()))
frame = frame.dropna(subset=[*FEATURES, "species"])
train, test = train_test_split(frame, test_size=0.3, random_state=0, stratify=frame["species"])
model = make_pipeline(StandardScaler(), LogisticRegression(C=args.C, max_iter=1000))
model.fit(train[FEATURES], train["species"])
accuracy = float(model.score(test[FEATURES], test["species"]))
print(f"accuracy={accuracy:.4f} rows={len(frame)}")
hypertune.HyperTune().report_hyperparameter_tuning_metric("accuracy", accuracy)
with tempfile.TemporaryDirectory() as scratch:
    path = os.path.join(scratch, "model.joblib")
    joblib.dump(model, path)
    blob(os.environ["AIP_MODEL_DIR"] + "model.joblib").upload_from_filename(path)
