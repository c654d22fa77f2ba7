"""Runs every benchmark module in this package that defines `main()`, or only those named:
`python -m benchmarks [name ...]`."""

from __future__ import annotations

import importlib
import pkgutil
import sys
from pathlib import Path


def main(names: list[str]) -> int:
    folder = Path(__file__).parent
    found = sorted(
        m.name for m in pkgutil.iter_modules([str(folder)]) if not m.name.startswith("_")
    )
    unknown = sorted(set(names) - set(found))
    if unknown:
        print(f"unknown benchmark(s) {unknown}; choose from {found}", file=sys.stderr)
        return 2
    sys.argv = sys.argv[:1]  # benchmarks that parse their own arguments see none of ours
    for name in names or found:
        module = importlib.import_module(f"benchmarks.{name}")
        if callable(getattr(module, "main", None)):
            print(f"== {name}", flush=True)
            module.main()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
