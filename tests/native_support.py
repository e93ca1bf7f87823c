"""Native kernels in tests: the kernel if it was built, a skip (outside CI) if it was not.

Under CI (``CI`` set) a kernel that was not built fails the test instead of skipping it: CI
installs with a compiler, so a missing kernel there means the build hook broke, and the
property tests comparing a kernel with its Python twin must not pass on nothing.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from types import ModuleType

import pytest

from pytest_entropy.core.fastpath import _import_kernel, use_fast_paths, use_native_kernels

__all__ = ["native_kernel", "paths"]


def native_kernel(name: str) -> ModuleType:
    """The built kernel ``pytest_entropy.<name>``; skips (fails under CI) when it is missing."""
    # The package's own memo, not a fresh import: a pytester run restores sys.modules, and
    # an extension imported again after that is another module object.
    found = _import_kernel(name)
    if found is None:
        message = f"the native kernel {name} is not built; build it with `python hatch_build.py`"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return found


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
