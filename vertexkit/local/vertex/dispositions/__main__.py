"""`python -m vertexkit.local.vertex.dispositions [--write]`: print or write the report."""

from __future__ import annotations

import sys

from vertexkit.local.vertex.dispositions.report import REPORT, render


def main(argv: list[str]) -> None:
    text = render()
    if "--write" in argv:
        REPORT.write_text(text)
        print(f"wrote {REPORT}")
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main(sys.argv[1:])
