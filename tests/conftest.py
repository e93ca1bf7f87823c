"""Shared test configuration: hypothesis profiles and the shared corpora location."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    derandomize=True,
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", max_examples=60, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))

REPO = Path(__file__).resolve().parents[1]
SHARED_CORPORA = Path(os.environ.get("ENTROPY_SHARED_CORPORA", REPO.parent / "shared" / "corpora"))
DEMO = REPO / "corpora" / "demo"


@pytest.fixture
def demo_dir() -> Path:
    return DEMO


@pytest.fixture
def shared_corpora() -> Path:
    if not SHARED_CORPORA.is_dir():
        pytest.skip(
            f"the shared third-party corpora are not at {SHARED_CORPORA} "
            "(set ENTROPY_SHARED_CORPORA to their location)"
        )
    return SHARED_CORPORA
