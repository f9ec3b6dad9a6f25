"""Engine tests: Bedrock plays read AWS credentials from the environment only, so test values are set
for every test here (a test of the missing-variable error removes them itself)."""

from __future__ import annotations

import pytest

from tests.engines._wire_matrix import AWS_TEST_ENV


@pytest.fixture(autouse=True)
def _aws_test_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in AWS_TEST_ENV.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("AWS_SESSION_TOKEN", raising=False)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
