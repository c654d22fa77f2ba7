"""`aiplatform_v1` names resolved one module at a time, and the same package for everyone else.

Each case runs in a fresh interpreter: this test process may have imported aiplatform_v1 already.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from vertexkit.runtime import gapic

TYPE_MODULES = "[m for m in sys.modules if m.startswith('google.cloud.aiplatform_v1.types.')]"


def run_fresh(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_one_service_loads_its_own_types_not_the_package() -> None:
    out = run_fresh(f"""
        import sys
        from vertexkit.runtime.gapic import aiplatform_v1
        aiplatform_v1.Model, aiplatform_v1.ModelServiceClient, aiplatform_v1.JobState
        package = sys.modules["google.cloud.aiplatform_v1"]
        print(len({TYPE_MODULES}), "JobServiceClient" in vars(package))
    """)
    loaded, package_init_ran = out.split()
    assert int(loaded) < 40  # of 124: the package init would load them all
    assert package_init_ran == "False"


def test_the_package_is_whole_for_code_that_imports_it_afterwards() -> None:
    out = run_fresh(f"""
        import sys
        from vertexkit.runtime.gapic import aiplatform_v1 as lazy
        model, client = lazy.Model, lazy.ModelServiceClient
        from google.cloud import aiplatform_v1
        from google.cloud.aiplatform_v1 import JobServiceClient
        from google.cloud.aiplatform_v1.types import model as model_module
        assert aiplatform_v1.Model is model and aiplatform_v1.ModelServiceClient is client
        assert aiplatform_v1.types.Model is model and model_module.Model is model
        assert JobServiceClient is aiplatform_v1.services.job_service.JobServiceClient
        assert type(aiplatform_v1).__name__ == "module"
        print(len({TYPE_MODULES}), len(aiplatform_v1.__all__))
    """)
    loaded, exported = map(int, out.split())
    assert loaded > 100 and exported > 500


def test_threads_asking_the_package_meanwhile_wait_for_its_init() -> None:
    # The local cloud serves from threads: none may see a half-initialised package.
    out = run_fresh("""
        import sys, threading
        from vertexkit.runtime.gapic import aiplatform_v1 as lazy
        lazy.Model
        package = sys.modules["google.cloud.aiplatform_v1"]
        names = ["JobServiceClient", "Endpoint", "PipelineJob", "Model", "DeployedModel"] * 4
        found, start = [], threading.Barrier(len(names))
        def ask(name):
            start.wait()
            found.append(getattr(package, name) is getattr(lazy, name))
        threads = [threading.Thread(target=ask, args=(n,)) for n in names]
        [t.start() for t in threads]
        [t.join() for t in threads]
        print(len(found), all(found))
    """)
    assert out == "20 True"


@pytest.mark.parametrize("first", ["lazy-first", "plain-first"])
def test_import_whole_package_runs_the_init_either_way(first: str) -> None:
    before = "lazy.Model" if first == "lazy-first" else "import google.cloud.aiplatform_v1"
    out = run_fresh(f"""
        import sys
        from vertexkit.runtime import gapic
        from vertexkit.runtime.gapic import aiplatform_v1 as lazy
        {before}
        package = gapic.import_whole_package()
        print(type(package).__name__, "JobServiceClient" in vars(package), len({TYPE_MODULES}))
    """)
    kind, whole, loaded = out.split()
    assert (kind, whole) == ("module", "True") and int(loaded) > 100


def test_names_already_imported_come_from_the_package_itself() -> None:
    out = run_fresh("""
        from google.cloud import aiplatform_v1
        from vertexkit.runtime.gapic import aiplatform_v1 as lazy
        print(lazy.Endpoint is aiplatform_v1.Endpoint, type(aiplatform_v1).__name__)
    """)
    assert out == "True module"


def test_every_name_the_package_exports_resolves_to_the_packages_own() -> None:
    # Also the drift check: a new aiplatform whose __init__ reads differently fails here.
    from google.cloud import aiplatform_v1

    assert set(gapic.exports()) == set(aiplatform_v1.__all__)
    wrong = [n for n in gapic.exports() if gapic.resolve(n) is not getattr(aiplatform_v1, n)]
    assert wrong == []


@pytest.mark.parametrize(
    ("name", "error"),
    [("NoSuchMessage", AttributeError), ("__wrapped__", AttributeError)],
    ids=["unknown-name", "dunder-probe"],
)
def test_an_unknown_name_is_an_attribute_error(name: str, error: type[Exception]) -> None:
    from vertexkit.runtime.gapic import aiplatform_v1

    with pytest.raises(error):
        getattr(aiplatform_v1, name)
