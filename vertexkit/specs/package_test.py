"""`vertexkit.specs` loads its names on first use: what each name is, and that a small check
does not pay for the pydantic models (the CLI's option checks import `naming` alone)."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

import vertexkit.specs as specs
from vertexkit.specs import errors, machines, naming, study, worker_pools

# `from vertexkit.specs import catalog` is the function: the module is reached by its path
catalog_module = importlib.import_module("vertexkit.specs.catalog")


@pytest.mark.parametrize("name", specs.__all__)
def test_every_exported_name_is_the_defining_modules_own(name: str) -> None:
    eager = {"Catalog": catalog_module, "MachineType": catalog_module, "catalog": catalog_module}
    eager["SpecError"] = errors
    home = eager.get(name) or importlib.import_module(specs._HOMES[name])
    assert getattr(specs, name) is getattr(home, name)


def test_catalog_is_the_function_after_its_submodule_is_imported() -> None:
    # the submodule `vertexkit.specs.catalog` and the function `catalog` share a name
    assert callable(specs.catalog) and specs.catalog is catalog_module.catalog
    assert specs.catalog().machine_types  # the function, not the module


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'NoSuchSpec'"):
        specs.NoSuchSpec  # noqa: B018


def test_the_naming_checks_import_no_pydantic() -> None:
    probe = "import sys, vertexkit.specs.naming; print('pydantic' in sys.modules)"
    answer = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert answer.returncode == 0, answer.stderr
    assert answer.stdout.strip() == "False"


def test_the_specs_modules_are_those_the_table_names() -> None:
    # a renamed module fails here, not at a user's first lookup
    assert {machines.__name__, naming.__name__, study.__name__, worker_pools.__name__} <= set(
        specs._HOMES.values()
    )
