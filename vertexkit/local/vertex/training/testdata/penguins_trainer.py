"""Trains a scikit-learn classifier of penguin species and saves model.joblib to AIP_MODEL_DIR.

Reads `bigquery-public-data.ml_datasets.penguins` (`--table`) with google-cloud-bigquery, which
follows BIGQUERY_EMULATOR_HOST locally and the default credentials on Vertex AI. Reports the
held-out accuracy to hypertune as `accuracy`.
"""

import argparse
import os
import tempfile

import hypertune
import joblib
from google.cloud import bigquery, storage
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

FEATURES = ["culmen_length_mm", "culmen_depth_mm", "flipper_length_mm", "body_mass_g"]

parser = argparse.ArgumentParser()
parser.add_argument("--table", default="bigquery-public-data.ml_datasets.penguins")
parser.add_argument("--C", type=float, default=1.0)
args = parser.parse_args()


def bigquery_client() -> bigquery.Client:
    if os.environ.get("BIGQUERY_EMULATOR_HOST"):
        # An emulator takes no credentials; without this the client looks for Google ones.
        from google.auth.credentials import AnonymousCredentials

        return bigquery.Client(
            credentials=AnonymousCredentials(), project=os.environ["CLOUD_ML_PROJECT_ID"]
        )
    return bigquery.Client()


query = f"SELECT species, {', '.join(FEATURES)} FROM `{args.table}`"
frame = bigquery_client().query(query).to_dataframe(create_bqstorage_client=False)
frame = frame.dropna(subset=[*FEATURES, "species"])
train, test = train_test_split(frame, test_size=0.3, random_state=0, stratify=frame["species"])
model = make_pipeline(StandardScaler(), LogisticRegression(C=args.C, max_iter=1000))
model.fit(train[FEATURES].astype(float), train["species"])
accuracy = float(model.score(test[FEATURES].astype(float), test["species"]))
print(f"accuracy={accuracy:.4f} rows={len(frame)}")
hypertune.HyperTune().report_hyperparameter_tuning_metric("accuracy", accuracy)
with tempfile.TemporaryDirectory() as scratch:
    path = os.path.join(scratch, "model.joblib")
    joblib.dump(model, path)
    bucket, _, name = (
        (os.environ["AIP_MODEL_DIR"] + "model.joblib").removeprefix("gs://").partition("/")
    )
    storage.Client().bucket(bucket).blob(name).upload_from_filename(path)
