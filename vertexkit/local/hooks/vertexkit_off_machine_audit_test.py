"""The seal's audit: what counts as leaving the machine, and which processes it leaves alone."""

from __future__ import annotations

import sys

import pytest

from vertexkit.local.hooks import vertexkit_off_machine_audit as audit


@pytest.mark.parametrize(
    ("host", "leaves"),
    [
        ("127.0.0.1", False), ("::1", False), ("localhost", False), ("api.localhost", False),
        ("192.0.2.1", True), ("storage.googleapis.com", True), ("metadata.google.internal", True),
        (b"oauth2.googleapis.com", True),
    ],
)  # fmt: skip
def test_off_machine(host: str | bytes, leaves: bool) -> None:
    assert audit.off_machine(host) is leaves


@pytest.mark.parametrize(
    ("argv", "is_pip"),
    [
        (["python", "-m", "pip", "install", "x"], True),
        (["/venv/bin/pip3", "install", "x"], True),
        (["/env/bin/python", "/venv/lib/pip/__pip-runner__.py", "install", "x"], True),
        (["python", "pipeline_train.py"], False),
        (["python", "-m", "tabular_trainer.task"], False),
    ],
)
def test_pip_alone_is_left_unaudited(
    argv: list[str], is_pip: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "orig_argv", argv)
    assert audit._is_pip() is is_pip
