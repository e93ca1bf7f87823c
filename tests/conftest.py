"""Shared test configuration: hypothesis profiles and the shared corpora location."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

with contextlib.suppress(ImportError):  # without the html extra nothing imports it
    # pygal (the html extra) imports the importlib_metadata backport, which moves distribution
    # discovery from the stdlib's finder to one it puts on sys.meta_path. pytester's in-process
    # runs restore sys.meta_path afterwards: were the backport first imported inside such a
    # run, its finder would be dropped and no later run could find a plugin's entry point.
    # Importing it here puts the finder in every snapshot.
    import importlib_metadata  # noqa: F401

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


@pytest.fixture(params=["native", "plain"])
def scan_path(request: pytest.FixtureRequest) -> Iterator[str]:
    """Run a test on the Rust core (``native``, skipped where it is not built) and on the
    plain Python (``plain``, every native and fast piece off): the two implementations
    the pipeline chooses between (issue 28)."""
    from tests.native_core_support import on_path

    with on_path(request.param):
        yield request.param
