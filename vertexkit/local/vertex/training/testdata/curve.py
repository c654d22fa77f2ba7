"""A learning curve for early-stopping tests: reports `score` through cloudml-hypertune at
steps 1..--steps, --sleep seconds apart. Trials whose CLOUD_ML_TRIAL_ID is in --bad_trials
report a flat 0.1; the others climb from 0.6 by 0.05 a step. --x is the tuned (unscored)
parameter."""

import argparse
import os
import time

import hypertune

parser = argparse.ArgumentParser()
parser.add_argument("--x", type=float, default=0.0)
parser.add_argument("--steps", type=int, default=6)
parser.add_argument("--sleep", type=float, default=0.15)
parser.add_argument("--bad_trials", default="")
args = parser.parse_args()
bad = os.environ.get("CLOUD_ML_TRIAL_ID", "") in args.bad_trials.split(",")
reporter = hypertune.HyperTune()
for step in range(1, args.steps + 1):
    score = 0.1 if bad else 0.6 + 0.05 * step
    reporter.report_hyperparameter_tuning_metric("score", score, global_step=step)
    time.sleep(args.sleep)
