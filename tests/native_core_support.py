"""The Rust core in tests: run a block on the native path or the plain one, compare states.

The native path needs the extension (``pytest_entropy._core``, built from ``native/``). Where
it is not built a native case is skipped with the reason; under CI (``CI`` set) it fails
instead, because CI builds the extension and a differential test must not pass on nothing.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from types import ModuleType
from typing import Any

import pytest

from pytest_entropy.core.meter import MeterState
from pytest_entropy.core.native_core import _import_core, use_native_core

__all__ = ["PATHS", "native_core_module", "on_path", "state_snapshot"]

# The two implementations the pipeline chooses between.
PATHS = ("native", "plain")


def native_core_module() -> ModuleType:
    """The built extension; skips (fails under CI) when it is not built."""
    found = _import_core()
    if found is None:
        message = (
            "the Rust core pytest_entropy._core is not built (build native/ with "
            "`cargo build --release --features python`, see docs/native-core.md)"
        )
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return found


@contextmanager
def on_path(path: str) -> Iterator[None]:
    """Run a block with the Rust core (``"native"``) or without it (``"plain"``: the
    specification)."""
    if path == "native":
        native_core_module()
    core = use_native_core(path == "native")
    try:
        yield
    finally:
        use_native_core(core)


def state_snapshot(state: MeterState) -> dict[str, Any]:
    """Every slot of a meter state, maps as ordered item lists and floats bit for bit."""
    return {
        "totals": [
            state.traces,
            state.operations,
            state.action_operations,
            state.discovery_operations,
            state.workflow_operations,
            state.succeeded,
            state.failed,
            state.aborted,
            state.timed_out,
            state.invocation_rejections,
        ],
        "refs": [
            (
                ref,
                acc.calls,
                acc.succeeded,
                acc.failed,
                list(acc.signatures.items()),
                list(acc.stages.items()),
                acc.churn_pairs,
                float(acc.churn_sum).hex(),
                [float(term).hex() for term in acc.churn_terms],
            )
            for ref, acc in state.refs.items()
        ],
        "churn": (
            state.churn_pairs,
            float(state.churn_sum).hex(),
            [float(term).hex() for term in state.churn_terms],
        ),
        "tasks": [(task, list(counts.items())) for task, counts in state.task_sequences.items()],
        "models": [(model, state_snapshot(inner)) for model, inner in state.models.items()],
    }
