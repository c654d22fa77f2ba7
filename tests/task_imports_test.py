"""What a built-in component's task imports before it runs: no heavy library it may not use.

A task process runs the component's body, whose first lines import the runtime. Those imports
must not pull in the aiplatform SDK (its `constants` alone take about 2 s; prebuilt images come
from vertexkit/specs/data/images.json), the whole `aiplatform_v1` package (every GAPIC service),
or sklearn, matplotlib and pandas: the functions that need them import them.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

COMPONENTS = sorted(Path(__file__).parents[1].glob("components/*/component.py"))
# An import statement at the body's indentation, with a parenthesised name list if any.
BODY_IMPORT = re.compile(r"^    ((?:from|import) [^\n(]+(?:\([^)]*\))?)", re.M)
HEAVY = ("google.cloud.aiplatform", "sklearn", "matplotlib", "pandas")
REPORT = """
import sys
heavy = [m for m in {heavy!r} if m in sys.modules]
package = sys.modules.get("google.cloud.aiplatform_v1")
if package is not None and "JobServiceClient" in vars(package):
    heavy.append("google.cloud.aiplatform_v1 (the whole package)")
print(",".join(heavy))
"""


def body_imports(component: Path) -> str:
    statements = BODY_IMPORT.findall(component.read_text(encoding="utf-8"))
    return "\n".join(" ".join(statement.split()) for statement in statements)


@pytest.mark.parametrize("component", COMPONENTS, ids=[c.parent.name for c in COMPONENTS])
def test_a_tasks_imports_load_nothing_heavy(component: Path) -> None:
    imports = body_imports(component)
    assert "vertexkit" in imports  # the body was found
    code = imports + "\n" + REPORT.format(heavy=HEAVY)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ""
