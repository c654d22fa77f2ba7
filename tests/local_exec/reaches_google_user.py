"""The guard's control: code that tries to reach Google (an OAuth token URL no hook maps)."""

import requests


def test_reaching_google_is_caught() -> None:
    try:
        requests.get("https://oauth2.googleapis.com/token", timeout=5)
    except requests.RequestException:
        pass


def test_a_grpc_client_is_caught() -> None:
    """An aiplatform GAPIC client handed its own gRPC transport object: the hook leaves it be."""
    from google.auth.credentials import AnonymousCredentials
    from google.cloud.aiplatform_v1.services.job_service.transports import JobServiceGrpcTransport

    try:
        JobServiceGrpcTransport(credentials=AnonymousCredentials())
    except OSError:
        pass
