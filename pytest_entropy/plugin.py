"""The pytest entry point ``entropy``: a shim over :mod:`pytest_entropy.pytest.plugin`.

pytest loads this module by name from the ``pytest11`` entry point; every hook and fixture
lives in the ``pytest/`` folder and is re-exported here so the entry point keeps its name.
"""

from __future__ import annotations

from pytest_entropy.pytest.plugin import (
    entropy_meter,
    entropy_ratchet,
    entropy_sessions,
    entropy_snapshot,
    entropy_surface,
    pytest_addoption,
    pytest_configure,
    pytest_load_initial_conftests,
)

__all__ = [
    "entropy_meter",
    "entropy_ratchet",
    "entropy_sessions",
    "entropy_snapshot",
    "entropy_surface",
    "pytest_addoption",
    "pytest_configure",
    "pytest_load_initial_conftests",
]
