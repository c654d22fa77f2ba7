"""A cheap synthetic objective for tuning: reports `score` through cloudml-hypertune.

score = -(log10(lr) + 2)^2 - (depth - 6)^2 / 10 (+ 0.5 when optimizer == "adam"); best 0.5.
Exits 2 without reporting when --fail_above_depth is given and depth exceeds it.
"""

import argparse
import math

import hypertune

parser = argparse.ArgumentParser()
parser.add_argument("--lr", type=float, required=True)
parser.add_argument("--depth", type=int, required=True)
parser.add_argument("--optimizer", default="sgd")
parser.add_argument("--momentum", type=float, default=0.0)  # tuned, not scored: a zero bound
parser.add_argument("--fail_above_depth", type=int, default=None)
parser.add_argument("--no_report", action="store_true")
args = parser.parse_args()
if args.fail_above_depth is not None and args.depth > args.fail_above_depth:
    raise SystemExit(2)
score = -((math.log10(args.lr) + 2) ** 2) - (args.depth - 6) ** 2 / 10
score += 0.5 if args.optimizer == "adam" else 0.0
if not args.no_report:
    reporter = hypertune.HyperTune()
    reporter.report_hyperparameter_tuning_metric("score", score - 1.0, global_step=1)
    reporter.report_hyperparameter_tuning_metric("score", score, global_step=2)
print(f"score={score}")
