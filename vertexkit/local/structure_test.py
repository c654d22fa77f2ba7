"""The local cloud's shape, checked from its imports: a service gets handles, never the server;
an area never reaches into another area's routes; a broken rule becomes a 400 in one place."""

from __future__ import annotations

import ast
from pathlib import Path

LOCAL = Path(__file__).parent
VERTEX = LOCAL / "vertex"
KFP = LOCAL / "kfp"
REGISTRAR = VERTEX / "routes.py"  # registers every area: the one module that imports their routes


def imported_modules(path: Path) -> set[str]:
    """Every module a file imports, at any depth (under TYPE_CHECKING and in functions too)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def product_files(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*.py") if not p.name.endswith("_test.py")]


def test_no_vertex_or_console_module_imports_the_server() -> None:
    offenders = [
        str(path.relative_to(LOCAL))
        for folder in (VERTEX, LOCAL / "console", LOCAL / "bigquery", LOCAL / "storage", KFP)
        for path in product_files(folder)
        if "vertexkit.local.server" in imported_modules(path)
    ]
    assert offenders == []


def test_no_area_imports_another_area_s_routes() -> None:
    offenders = []
    for path in product_files(VERTEX):
        if path == REGISTRAR:
            continue
        area = path.relative_to(VERTEX).parts[0]
        for module in imported_modules(path):
            parts = module.split(".")
            routes_of_an_area = module.startswith("vertexkit.local.vertex.") and len(parts) > 4
            if routes_of_an_area and parts[-1] == "routes" and parts[3] != area:
                offenders.append(f"{path.relative_to(LOCAL)} imports {module}")
    console = [p for p in product_files(LOCAL / "console")
               if any(m.startswith("vertexkit.local.vertex.") and m.endswith(".routes")
                      for m in imported_modules(p))]  # fmt: skip
    assert offenders == [] and console == []


def test_spec_errors_become_400s_in_one_place() -> None:
    """`vertexkit.local.errors.spec_error_handler`, registered on the app: no handler of the
    Vertex service catches a SpecError to turn it into a 400 itself."""
    offenders = []
    for path in product_files(VERTEX):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ExceptHandler) and "SpecError" in ast.unparse(node.type or ""):
                answered = ast.unparse(ast.Module(body=node.body, type_ignores=[]))
                if any(word in answered for word in ("bad_request", "ApiError", "refused")):
                    offenders.append(f"{path.relative_to(LOCAL)}:{node.lineno}")
    assert offenders == []


def test_every_service_and_area_has_the_one_lifecycle() -> None:
    """Started, warmed and closed with no check of what a part has (`vertexkit.local.lifecycle`)."""
    parts_files = [*product_files(VERTEX), *product_files(LOCAL / "console"), *product_files(KFP),
                   LOCAL / "bigquery" / "routes.py", LOCAL / "storage" / "routes.py"]  # fmt: skip
    offenders = [
        f"{path.relative_to(LOCAL)}: {node.name}"
        for path in parts_files
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.ClassDef)
        and node.name.endswith(("Area", "Service"))
        and node.name not in NOT_A_PART
        and "Lifecycle" not in {ast.unparse(base) for base in node.bases}
    ]
    assert offenders == []


NOT_A_PART = {"JobArea"}


def test_the_kfp_api_reaches_vertex_only_through_its_handle() -> None:
    """`vertexkit/local/kfp/` runs its runs as Vertex pipeline jobs through the `PipelineJobs`
    handle the server gives it: it imports no Vertex module but the generic JSON store."""
    offenders = [
        f"{path.relative_to(LOCAL)} imports {module}"
        for path in product_files(KFP)
        for module in imported_modules(path)
        if module.startswith("vertexkit.local.vertex")
        and not module.startswith("vertexkit.local.vertex.store")
    ]
    assert offenders == []  # a Protocol of the job verbs, not a part the cloud starts
