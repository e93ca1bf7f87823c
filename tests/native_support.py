"""Which implementation a test block runs on.

The C kernels are gone (issue 28); ``"native"`` now runs the Python fast paths, as
``"python"`` does, until the Rust core takes their place.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from pytest_entropy.core.fastpath import use_fast_paths, use_native_kernels

__all__ = ["paths"]


@contextmanager
def paths(kind: str) -> Iterator[None]:
    """Run a block on one implementation: ``"native"`` or ``"python"`` (the fast paths) or
    ``"plain"`` (every fast path off)."""
    fast = use_fast_paths(kind != "plain")
    native = use_native_kernels(kind == "native")
    try:
        yield
    finally:
        use_fast_paths(fast)
        use_native_kernels(native)
