"""Prints a few lines, then exits 3: the job must fail and carry the tail of this log."""

import sys

for step in range(30):
    print(f"step {step}")
print("the data could not be read: gs://nowhere/data.csv", file=sys.stderr)
sys.exit(3)
