"""`aiplatform.PipelineJob.submit()` from code that points the SDK at the local cloud itself,
with `aiplatform.init(api_endpoint=...)`, outside `vertexkit local exec`.

The SDK creates the pipeline root's bucket and then asks Resource Manager for the project
NUMBER, to grant the default compute service account on it
(`gcs_utils.create_gcs_bucket_for_pipeline_artifacts_if_it_does_not_exist`; for a bucket that
exists, `_verify_bucket_ownership` asks the same). Its `ProjectsClient` dials Google's host
over gRPC whatever `api_endpoint` says: about 60 s of retries here, after which the grant is
skipped and only logged. `vertexkit/local/hooks/vertexkit_redirect.py` makes that call follow
the SDK's plain-HTTP endpoint.
"""

# No `from __future__ import annotations`: KFP reads the components' real type annotations.

import time
import uuid
from pathlib import Path

import pytest
from google.auth.credentials import AnonymousCredentials
from google.cloud import aiplatform
from google.cloud.aiplatform import initializer
from kfp import compiler, dsl

from vertexkit.local import LocalCloud
from vertexkit.local.projects import project_number


@dsl.component(install_kfp_package=False)
def identity(x: int) -> int:
    return x


@dsl.pipeline(name="sdk-submit")
def submit_pipeline(x: int = 1) -> int:
    return identity(x=x).output


def test_submit_asks_the_local_resource_manager_not_google_s(
    local_cloud: LocalCloud, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # No service account: another test in this process may have set one with aiplatform.init,
    # which keeps it, and the SDK then grants that account instead of the default compute one.
    monkeypatch.setattr(initializer.global_config, "_service_account", None)
    template = tmp_path / "submit.yaml"
    compiler.Compiler().compile(submit_pipeline, str(template))
    context = local_cloud.context()
    aiplatform.init(project=context.project, location=context.region,
                    api_endpoint=local_cloud.url, api_transport="rest",
                    credentials=AnonymousCredentials())  # fmt: skip
    bucket = f"sdk-submit-{uuid.uuid4().hex[:12]}"
    job = aiplatform.PipelineJob(
        display_name="submitted", template_path=str(template), pipeline_root=f"gs://{bucket}/root"
    )
    started = time.monotonic()
    job.submit()
    elapsed = time.monotonic() - started
    # The observable: the SDK grants "<project number>-compute@developer.gserviceaccount.com"
    # (gcs_utils, the default compute service account) only once Resource Manager has answered
    # the number; a call stuck on Google's host ends in an exception and no grant.
    number = project_number(context.project)
    account = f"serviceAccount:{number}-compute@developer.gserviceaccount.com"
    policy = context.storage_client().bucket(bucket).get_iam_policy()
    assert account in policy["roles/storage.objectCreator"]
    assert account in policy["roles/storage.objectViewer"]
    assert elapsed < 20, f"submit took {elapsed:.1f} s"
    job.wait()
