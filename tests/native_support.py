"""Native kernels in tests: the kernel if it was built, a skip (outside CI) if it was not.

Under CI (``CI`` set) a kernel that was not built fails the test instead of skipping it: CI
installs with a compiler, so a missing kernel there means the build hook broke, and the
property tests comparing a kernel with its Python twin must not pass on nothing.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterator
from contextlib import contextmanager
from types import ModuleType

import pytest

from pytest_entropy.core.fastpath import use_fast_paths, use_native_kernels

__all__ = ["native_kernel", "paths"]


def native_kernel(name: str) -> ModuleType:
    """The built kernel ``pytest_entropy.<name>``; skips (fails under CI) when it is missing."""
    try:
        return importlib.import_module("pytest_entropy." + name)
    except ImportError as error:
        message = (
            f"the native kernel {name} is not built ({error}); "
            "build it with `python hatch_build.py`"
        )
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)


@contextmanager
def paths(kind: str) -> Iterator[None]:
    """Run a block on one implementation: ``"native"`` (fast paths with kernels),
    ``"python"`` (fast paths, kernels refused) or ``"plain"`` (every fast path off)."""
    fast = use_fast_paths(kind != "plain")
    native = use_native_kernels(kind == "native")
    try:
        yield
    finally:
        use_fast_paths(fast)
        use_native_kernels(native)
