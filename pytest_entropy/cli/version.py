"""``pytest-entropy --version``: the versions a result depends on, and which implementation runs.

A module of its own, free of argparse and of every command: the one-word ``--version`` (what
CI steps and hooks call) is answered before the grammar is built (issue 32).
"""

from __future__ import annotations

from pytest_entropy._version import __version__
from pytest_entropy.core.versions import ENTROPY_METRIC_VERSION, icu_version

__all__ = ["PROG", "native_core_text", "version_text"]

PROG = "pytest-entropy"


def version_text() -> str:
    """``pytest-entropy X (metric v2, ICU Y)``, then whether the native core is loaded.

    The first line keeps its form (scripts read it); the second says which implementation
    measures: the Rust core (``pytest_entropy._core``) or the plain Python."""
    first = f"{PROG} {__version__} (metric v{ENTROPY_METRIC_VERSION}, ICU {icu_version()})"
    return f"{first}\n{native_core_text()}"


def native_core_text() -> str:
    """``native core: loaded``, or why the plain Python runs instead."""
    from pytest_entropy.core.native_core import core, core_available

    if core() is not None:
        return "native core: loaded (pytest_entropy._core)"
    if core_available():
        return "native core: off (PYTEST_ENTROPY_PURE=1), the plain Python runs"
    return "native core: not installed, the plain Python runs"
