#!/usr/bin/env bash
# The GPU check as one command, for a machine with NVIDIA GPUs (see benchmarks/gpu_check.py):
#   bash benchmarks/gpu_check.sh [--epochs N] [--replicas R] [--accelerator-type TYPE]
# Runs the gpu_training pipeline on the GPUs, then on CPU, and reports which GPUs each replica
# saw and the training time of each. PYTHON picks the interpreter (default: .venv/bin/python);
# it needs vertexkit installed and a CUDA build of PyTorch.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-.venv/bin/python}"
command -v nvidia-smi >/dev/null || { echo "nvidia-smi not found: no NVIDIA GPU to check" >&2; exit 2; }
nvidia-smi --query-gpu=index,uuid,name,memory.total --format=csv,noheader
"$PYTHON" - <<'PY'
import sys
try:
    import torch
except ImportError:
    sys.exit("PyTorch is not installed in this Python: install a CUDA build (vertexkit[torch])")
if not torch.cuda.is_available():
    sys.exit(f"torch {torch.__version__} sees no CUDA device: install a CUDA build of PyTorch")
print(f"torch {torch.__version__}, CUDA {torch.version.cuda}, {torch.cuda.device_count()} GPU(s)")
PY
exec "$PYTHON" -m benchmarks.gpu_check "$@"
