"""`aiplatform_v1` names without the package-wide import: one service's client and types only.

`google.cloud.aiplatform_v1`'s `__init__` imports every GAPIC service and all 124 type modules
(0.76 s CPU in a task process), and importing any submodule runs it first: `aiplatform_v1.types`
or `aiplatform_v1.types.model` cost the same 0.64 s. A task uses one or two services (0.25-0.35 s
for all six the runtime uses). So

    from vertexkit.runtime.gapic import aiplatform_v1
    aiplatform_v1.Model(...); aiplatform_v1.ModelServiceClient(...)

resolves each name to the module that defines it (as the package's own `__init__` names it) and
imports only that module. To get there without the package init, `google.cloud.aiplatform_v1` and
its `types` package enter `sys.modules` as lazy packages: their `__init__` runs, on the same module
object, the first time anyone asks them for a name they do not hold yet (`aiplatform_v1.X`,
`from google.cloud.aiplatform_v1 import X`), so other code in the process sees the real package and
the same classes. Where the package is already imported (the local cloud, a warm worker), names
come from it unchanged.
"""

from __future__ import annotations

import importlib.util
import re
import sys
import threading
import types
from functools import cache
from pathlib import Path
from typing import Any

PACKAGE = "google.cloud.aiplatform_v1"
LAZY_PACKAGES = (PACKAGE, f"{PACKAGE}.types")
# `from .types.model import Model`, `from .services.model_service import (\n ModelServiceClient,`
_EXPORT = re.compile(r"^from \.((?:types|services)\.\w+) import \(?\s*(\w+)", re.M)
_NAMED = re.compile(r"\baiplatform_v1\.([A-Za-z]\w*)")  # `aiplatform_v1.Model` in a source
_LOCK = threading.RLock()
_initialising: set[str] = set()


def _import(name: str) -> types.ModuleType:
    # The `import` statement's own path, so `python -X importtime` reports these modules too
    # (importlib.import_module bypasses it).
    __import__(name)
    return sys.modules[name]


class _LazyPackage(types.ModuleType):
    """A package whose `__init__` runs when a name it lacks is asked for (submodules aside)."""

    def __getattr__(self, name: str) -> Any:
        submodule = f"{self.__name__}.{name}"
        if importlib.util.find_spec(submodule) is not None:
            # `from package import submodule` asks the package first: load only that one.
            return _import(submodule)
        _run_init(self)
        if name in vars(self):
            return vars(self)[name]
        raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")


def _run_init(package: types.ModuleType) -> None:
    """Runs the package's own `__init__` on it, once. Threads that ask meanwhile wait for it; the
    thread running it sees a package still being initialised, as any import would."""
    with _LOCK:
        if not isinstance(package, _LazyPackage) or package.__name__ in _initialising:
            return
        _initialising.add(package.__name__)
        try:
            assert package.__spec__ is not None and package.__spec__.loader is not None
            package.__spec__.loader.exec_module(package)
            package.__class__ = types.ModuleType  # a plain package from now on
        finally:
            _initialising.discard(package.__name__)


def _install_lazy_package(name: str) -> None:
    if name in sys.modules:  # already imported (or installed): it stays as it is
        return
    spec = importlib.util.find_spec(name)
    if spec is None or spec.submodule_search_locations is None:
        raise ImportError(f"{name} is not an installed package")
    package = _LazyPackage(name)
    package.__spec__, package.__loader__ = spec, spec.loader
    package.__path__ = list(spec.submodule_search_locations)
    package.__file__, package.__package__ = spec.origin, name
    sys.modules[name] = package
    parent, _, child = name.rpartition(".")
    setattr(sys.modules[parent], child, package)


@cache
def exports() -> dict[str, str]:
    """{name: defining module} as the package's `__init__` imports them, read without running it."""
    spec = importlib.util.find_spec(PACKAGE)
    assert spec is not None and spec.origin is not None
    with open(spec.origin, encoding="utf-8") as handle:
        source = handle.read()
    return {name: f"{PACKAGE}.{module}" for module, name in _EXPORT.findall(source)}


def resolve(name: str) -> Any:
    """`aiplatform_v1.<name>`, importing only the module that defines it."""
    module = exports().get(name)
    if module is None:  # not a name the package exports: the package itself answers
        return getattr(_import(PACKAGE), name)
    if PACKAGE not in sys.modules:
        _import("google.cloud")
        with _LOCK:
            for package in LAZY_PACKAGES:
                _install_lazy_package(package)
    return getattr(_import(module), name)


def runtime_names() -> list[str]:
    """Every `aiplatform_v1.NAME` that vertexkit.runtime's modules and their clients
    (`vertexkit.context`) name, read from their source: what a warm worker resolves ahead of the
    built-in components (not the whole package)."""
    here = Path(__file__).parent
    sources = [*here.glob("*.py"), here.parent / "context.py"]
    named: set[str] = set()
    for source in sources:
        if source.name != "gapic.py" and not source.name.endswith("_test.py"):
            named.update(_NAMED.findall(source.read_text(encoding="utf-8")))
    return sorted(named & exports().keys())


def import_whole_package() -> types.ModuleType:
    """The whole aiplatform_v1 package with its `__init__` run, lazy or not: what a warm worker
    preloads (`importlib.import_module` would hand back a lazy package still lazy)."""
    package = _import(PACKAGE)
    _run_init(package)  # nothing to do for a package imported the usual way
    return package


class _Names:
    """`aiplatform_v1.X` for the runtime; each name resolved once."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        value = resolve(name)
        setattr(self, name, value)
        return value


aiplatform_v1: Any = _Names()
