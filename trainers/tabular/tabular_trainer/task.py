"""Entry point: `python -m tabular_trainer.task [--name=value ...]`.

Follows Vertex AI's conventions for a training application:
- data: --training-data-uri / --validation-data-uri / --test-data-uri, defaulting to
  AIP_TRAINING_DATA_URI / AIP_VALIDATION_DATA_URI / AIP_TEST_DATA_URI (gs:// or local; a file,
  a directory or a `*` glob of Parquet, CSV or JSONL). Without validation data, 20 % of the
  training rows (stratified, seeded) are held out.
- model: AIP_MODEL_DIR (or --model-dir) receives `model.joblib` (what the prebuilt sklearn and
  xgboost serving images load), `feature_columns.json` (the column order of an instance),
  `model_metadata.json` (classes, feature types, hyperparameters) and `metrics.json`.
- tuning: the validation metric named by --hptune-metric is reported with cloudml-hypertune
  (the file named by CLOUD_ML_HP_METRIC_FILE), the way Vertex tuning jobs read it.
- restarts: with AIP_CHECKPOINT_DIR set, ensembles train in chunks of rounds (a tenth of them,
  or --checkpoint-every), each chunk checkpointed (by default only once CHECKPOINT_SECONDS have
  passed since the last: a run of a few seconds loses little to a restart, and each checkpoint
  writes the whole model); a restarted run with the same settings resumes from the last one.

XGBoost: Vertex's prebuilt xgboost image calls `booster.predict(xgboost.DMatrix(instances))`
(see aiplatform.prediction.xgboost.predictor): a scikit-learn Pipeline cannot serve there, and a
DMatrix holds numbers only. So for --framework xgboost the trainer saves the bare booster as
`model.bst`, trained on ENCODED features: numeric columns (median-imputed) then one 0/1 column per
category (`island=Biscoe`, ...). `feature_columns.json` lists that encoded order, and
`preprocessor.joblib` (scikit-learn only) turns raw rows into it. The booster answers class
probabilities in the order of `model_metadata.json`'s `classes`. To serve raw rows with categorical
values, use --framework sklearn (a Pipeline in `model.joblib` for the prebuilt sklearn image).
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import logging
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

import joblib
import numpy as np
import pandas as pd
from sklearn.metrics import accuracy_score, f1_score, log_loss
from sklearn.model_selection import train_test_split
from sklearn.pipeline import Pipeline

from tabular_trainer import data
from tabular_trainer.model import (
    DEFAULT_MODEL_TYPE,
    MODEL_TYPES,
    FeatureSchema,
    Hyperparameters,
    build_estimator,
    build_preprocessor,
    categories_of,
    default_chunk,
    encoded_feature_names,
    infer_schema,
    to_instances,
    train_in_rounds,
)

log = logging.getLogger("tabular_trainer")
METRICS = ("accuracy", "f1", "log_loss")
CHECKPOINT_STATE = "checkpoint.json"
CHECKPOINT_SECONDS = 30.0  # the default cadence's least gap between two checkpoints


# -- arguments -------------------------------------------------------------------------------
def whole_number(text: str) -> int:
    """An integer; tuning jobs may pass whole numbers as floats ("100.0")."""
    value = float(text)
    if not value.is_integer():
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}")
    return int(value)


def optional_depth(text: str) -> int | None:
    depth = whole_number(text)
    return depth if depth > 0 else None  # 0 or less: unlimited


def _flag(parser: argparse.ArgumentParser, name: str, **kwargs: Any) -> None:
    """`--n-estimators` and `--n_estimators` both work (tuning passes parameter ids as given)."""
    spellings = {f"--{name}", f"--{name.replace('_', '-')}"}
    parser.add_argument(*sorted(spellings, key=lambda s: "_" in s), dest=name, **kwargs)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    env = os.environ.get
    parser = argparse.ArgumentParser(
        prog="tabular_trainer.task", description=__doc__.split("\n")[0]
    )
    _flag(parser, "training_data_uri", default=env("AIP_TRAINING_DATA_URI"))
    _flag(parser, "validation_data_uri", default=env("AIP_VALIDATION_DATA_URI"))
    _flag(parser, "test_data_uri", default=env("AIP_TEST_DATA_URI"))
    _flag(parser, "data_format", default=env("AIP_DATA_FORMAT"), choices=data.FORMATS)
    _flag(parser, "label_column", default="species")
    _flag(parser, "exclude_columns", default="", help="comma-separated columns to ignore")
    _flag(parser, "framework", default="sklearn", choices=sorted(MODEL_TYPES))
    _flag(parser, "model_type", default=None)
    _flag(parser, "n_estimators", type=whole_number, default=100)
    _flag(parser, "max_depth", type=optional_depth, default=None)
    _flag(parser, "learning_rate", type=float, default=0.1)
    _flag(parser, "C", type=float, default=1.0)
    _flag(parser, "min_samples_leaf", type=whole_number, default=1)
    _flag(parser, "subsample", type=float, default=1.0)
    _flag(parser, "max_iter", type=whole_number, default=1000)
    _flag(parser, "seed", type=whole_number, default=42)
    _flag(parser, "hptune_metric", default="accuracy", choices=METRICS)
    _flag(parser, "model_dir", default=env("AIP_MODEL_DIR"))
    _flag(parser, "checkpoint_dir", default=env("AIP_CHECKPOINT_DIR"))
    _flag(parser, "checkpoint_every", type=whole_number, default=0, help="rounds per chunk")
    args = parser.parse_args(argv)
    args.model_type = args.model_type or DEFAULT_MODEL_TYPE[args.framework]
    if args.model_type not in MODEL_TYPES[args.framework]:
        parser.error(
            f"--model-type {args.model_type!r} is not a {args.framework} model type; "
            f"use one of {list(MODEL_TYPES[args.framework])}"
        )
    if not args.training_data_uri:
        parser.error("--training-data-uri is required (or set AIP_TRAINING_DATA_URI)")
    if not args.model_dir:
        parser.error("--model-dir is required (or set AIP_MODEL_DIR)")
    if args.n_estimators < 1:
        parser.error("--n-estimators must be at least 1")
    return args


def hyperparameters(args: argparse.Namespace) -> Hyperparameters:
    return Hyperparameters(
        n_estimators=args.n_estimators,
        max_depth=args.max_depth,
        learning_rate=args.learning_rate,
        C=args.C,
        min_samples_leaf=args.min_samples_leaf,
        subsample=args.subsample,
        max_iter=args.max_iter,
    )


# -- data ------------------------------------------------------------------------------------
def load_splits(args: argparse.Namespace) -> dict[str, pd.DataFrame]:
    label = args.label_column
    splits = {"training": data.read_table(args.training_data_uri, args.data_format)}
    if args.validation_data_uri:
        splits["validation"] = data.read_table(args.validation_data_uri, args.data_format)
    if args.test_data_uri:
        splits["test"] = data.read_table(args.test_data_uri, args.data_format)
    for name, frame in splits.items():
        if label not in frame.columns:
            raise data.DataError(
                f"{name} data has no label column {label!r}; its columns are {list(frame.columns)}"
            )
        splits[name] = frame[frame[label].notna()].reset_index(drop=True)
    if "validation" not in splits:
        training, validation = train_test_split(
            splits["training"],
            test_size=0.2,
            random_state=args.seed,
            stratify=splits["training"][label],
        )
        splits["training"] = training.reset_index(drop=True)
        splits["validation"] = validation.reset_index(drop=True)
    return splits


# -- checkpoints -----------------------------------------------------------------------------
def run_fingerprint(args: argparse.Namespace, schema: FeatureSchema, rows: int) -> str:
    """Identifies a run's settings: a checkpoint of different settings is not resumed."""
    settings = {
        "framework": args.framework,
        "model_type": args.model_type,
        "hyperparameters": asdict(hyperparameters(args)),
        "seed": args.seed,
        "label": args.label_column,
        "columns": schema.columns,
        "rows": rows,
        "data": args.training_data_uri,
    }
    return hashlib.sha256(json.dumps(settings, sort_keys=True).encode()).hexdigest()[:16]


def load_checkpoint(checkpoint_dir: str | None, fingerprint: str) -> Pipeline | None:
    if not checkpoint_dir:
        return None
    state_bytes = data.read_bytes(data.join(checkpoint_dir, CHECKPOINT_STATE))
    if state_bytes is None:
        return None
    state = json.loads(state_bytes)
    if state.get("fingerprint") != fingerprint:
        log.info("checkpoint in %s is for other settings; starting afresh", checkpoint_dir)
        return None
    payload = data.read_bytes(data.join(checkpoint_dir, state["file"]))
    if payload is None:
        return None
    log.info("resuming from checkpoint %s (%s rounds done)", state["file"], state["rounds"])
    return joblib.load(io.BytesIO(payload))


def checkpoint_writer(checkpoint_dir: str | None, fingerprint: str, min_seconds: float) -> Any:
    """Writes a checkpoint after a chunk, unless less than `min_seconds` have passed since the
    last one (or since the start)."""
    previous: list[str] = []
    last = [time.monotonic()]

    def write(pipeline: Pipeline, rounds: int) -> None:
        if not checkpoint_dir or time.monotonic() - last[0] < min_seconds:
            return
        last[0] = time.monotonic()
        name = f"checkpoint-{rounds:06d}.joblib"
        # The model first, then the state that points at it: a crash in between leaves the
        # previous state valid.
        data.write_bytes(data.join(checkpoint_dir, name), _dump(pipeline))
        state = {"fingerprint": fingerprint, "file": name, "rounds": rounds}
        data.write_json(data.join(checkpoint_dir, CHECKPOINT_STATE), state)
        log.info("checkpoint %s written", name)
        for old in previous:
            data.delete(data.join(checkpoint_dir, old))
        previous[:] = [name]

    return write


def _dump(value: Any) -> bytes:
    buffer = io.BytesIO()
    joblib.dump(value, buffer)
    return buffer.getvalue()


# -- metrics and outputs ---------------------------------------------------------------------
def evaluate(pipeline: Pipeline, instances: np.ndarray, labels: np.ndarray) -> dict[str, float]:
    probabilities = pipeline.predict_proba(instances)
    predicted = pipeline.classes_[np.argmax(probabilities, axis=1)]
    return {
        "accuracy": float(accuracy_score(labels, predicted)),
        "f1": float(f1_score(labels, predicted, average="macro")),
        "log_loss": float(log_loss(labels, probabilities, labels=pipeline.classes_)),
    }


def report_tuning_metric(tag: str, value: float, global_step: int) -> None:
    import hypertune

    hypertune.HyperTune().report_hyperparameter_tuning_metric(
        hyperparameter_metric_tag=tag, metric_value=value, global_step=global_step
    )


def write_model(
    model_dir: str,
    pipeline: Pipeline,
    schema: FeatureSchema,
    classes: list[Any],
    args: argparse.Namespace,
    metrics: dict[str, float],
    sample: np.ndarray | None = None,
) -> None:
    """Writes exactly one of model.joblib / model.bst (the prebuilt images refuse several).

    `sample` (one raw row, no value missing) becomes `sample_instance` in model_metadata.json:
    an instance in the order the model serves (encoded for XGBoost), ready to predict with."""
    preprocessor = pipeline.steps[0][1]
    metadata = {
        "framework": args.framework,
        "model_type": args.model_type,
        "label_column": args.label_column,
        "classes": classes,
        "raw_feature_columns": schema.columns,
        "numeric_columns": schema.numeric,
        "categorical_columns": schema.categorical,
        "categories": categories_of(preprocessor, schema),
        "hyperparameters": asdict(hyperparameters(args)),
        "seed": args.seed,
    }
    if args.framework == "xgboost":
        instance_columns = encoded_feature_names(preprocessor, schema)
        metadata["predicts"] = "class probabilities in the order of `classes`"
        data.write_bytes(data.join(model_dir, "model.bst"), _booster_bytes(pipeline))
        data.write_bytes(data.join(model_dir, "preprocessor.joblib"), _dump(preprocessor))
    else:
        instance_columns = schema.columns
        metadata["predicts"] = "class labels"
        data.write_bytes(data.join(model_dir, "model.joblib"), _dump(pipeline))
    metadata["feature_columns"] = instance_columns
    if sample is not None:
        row = preprocessor.transform(sample)[0] if args.framework == "xgboost" else sample[0]
        metadata["sample_instance"] = [_plain(value) for value in np.asarray(row).tolist()]
    data.write_json(data.join(model_dir, "feature_columns.json"), instance_columns)
    data.write_json(data.join(model_dir, "model_metadata.json"), metadata)
    data.write_json(data.join(model_dir, "metrics.json"), metrics)


def _plain(value: Any) -> Any:
    """A JSON value: numpy scalars as Python's, whole floats of an encoded row kept as floats."""
    return value.item() if isinstance(value, np.generic) else value


def sample_row(splits: dict[str, pd.DataFrame], schema: FeatureSchema) -> np.ndarray | None:
    """The first row of the test (else validation, else training) split with every feature."""
    for split in ("test", "validation", "training"):
        frame = splits.get(split)
        if frame is not None:
            complete = frame[schema.columns].dropna()
            if len(complete):
                return to_instances(complete.head(1), schema)
    return None


def _booster_bytes(pipeline: Pipeline) -> bytes:
    with tempfile.TemporaryDirectory() as scratch:
        path = os.path.join(scratch, "model.bst")
        pipeline.steps[-1][1].get_booster().save_model(path)
        with open(path, "rb") as handle:
            return handle.read()


# -- main ------------------------------------------------------------------------------------
def train(args: argparse.Namespace) -> dict[str, float]:
    splits = load_splits(args)
    exclude = [c.strip() for c in args.exclude_columns.split(",") if c.strip()]
    schema = infer_schema(splits["training"], args.label_column, exclude)
    classes = sorted(splits["training"][args.label_column].astype(str).unique().tolist())
    encode = {name: i for i, name in enumerate(classes)}

    def labels_of(frame: pd.DataFrame) -> np.ndarray:
        values = frame[args.label_column].astype(str)
        if args.framework == "xgboost":  # XGBClassifier takes class indices only
            return values.map(encode).fillna(-1).astype(int).to_numpy()
        return values.to_numpy()

    training = splits["training"]
    fingerprint = run_fingerprint(args, schema, len(training))
    pipeline = load_checkpoint(args.checkpoint_dir, fingerprint) or Pipeline(
        [
            ("preprocess", build_preprocessor(schema, scale=args.framework != "xgboost")),
            (
                "model",
                build_estimator(args.framework, args.model_type, hyperparameters(args), args.seed),
            ),
        ]
    )
    pipeline = train_in_rounds(
        pipeline,
        to_instances(training, schema),
        labels_of(training),
        args.framework,
        args.model_type,
        total_rounds=args.n_estimators,
        chunk=args.checkpoint_every or default_chunk(args.n_estimators),
        on_checkpoint=checkpoint_writer(
            args.checkpoint_dir,
            fingerprint,
            min_seconds=0.0 if args.checkpoint_every else CHECKPOINT_SECONDS,
        ),
    )
    metrics = evaluate(
        pipeline, to_instances(splits["validation"], schema), labels_of(splits["validation"])
    )
    if "test" in splits:
        test = evaluate(pipeline, to_instances(splits["test"], schema), labels_of(splits["test"]))
        metrics.update({f"test_{name}": value for name, value in test.items()})
    sample = sample_row(splits, schema)
    write_model(args.model_dir, pipeline, schema, classes, args, metrics, sample)
    report_tuning_metric(args.hptune_metric, metrics[args.hptune_metric], args.n_estimators)
    log.info("model written to %s; validation metrics %s", args.model_dir, metrics)
    return metrics


def main(argv: Sequence[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    args = parse_args(argv)
    try:
        train(args)
    except data.DataError as error:
        log.error("%s", error)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
