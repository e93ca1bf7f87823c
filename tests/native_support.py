"""Which implementation a test block runs on: the Rust core or the plain Python.

The C kernels and the Python fast paths beside the plain code are gone (issue 28): two
implementations remain, and the pipeline chooses between them in one place
(``run/corpus.py``). ``"native"`` allows the Rust core; ``"python"`` and ``"plain"`` (the
older name of the same thing) refuse it, so the plain Python runs.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from pytest_entropy.core.native_core import use_native_core

__all__ = ["paths"]


@contextmanager
def paths(kind: str) -> Iterator[None]:
    """Run a block with the Rust core allowed (``"native"``) or refused (``"python"``,
    ``"plain"``)."""
    previous = use_native_core(kind == "native")
    try:
        yield
    finally:
        use_native_core(previous)
