"""Writes the GPU variables it sees as JSON to argv[1]; then, given argv[2], waits until that
file exists (so a test holds the job RUNNING, and its GPUs busy, as long as it needs)."""

import json
import os
import sys
import time
from pathlib import Path

names = ("CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER")
Path(sys.argv[1]).write_text(json.dumps({name: os.environ.get(name) for name in names}))
while len(sys.argv) > 2 and not Path(sys.argv[2]).exists():
    time.sleep(0.01)
