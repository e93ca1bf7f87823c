"""``pytest-entropy --version``: the versions a result depends on, and which implementation runs.

A module of its own, free of argparse and of every command: the one-word ``--version`` (what
CI steps and hooks call) is answered before the grammar is built (issue 32).
"""

from __future__ import annotations

import os
import sys

from pytest_entropy._version import __version__
from pytest_entropy.core.versions import ENTROPY_METRIC_VERSION, icu_version

__all__ = ["PROG", "cached_icu_version", "native_core_text", "version_text"]

PROG = "pytest-entropy"

# Where the ICU version read from PyICU is kept between runs: beside this module's bytecode.
_ICU_CACHE = os.path.join(os.path.dirname(__file__), "__pycache__", "icu-version.txt")


def version_text() -> str:
    """``pytest-entropy X (metric v2, ICU Y)``, then whether the native core is loaded.

    The first line keeps its form (scripts read it); the second says which implementation
    measures: the Rust core (``pytest_entropy._core``) or the plain Python."""
    first = f"{PROG} {__version__} (metric v{ENTROPY_METRIC_VERSION}, ICU {cached_icu_version()})"
    return f"{first}\n{native_core_text()}"


def _icu_extension_key() -> str | None:
    """What identifies PyICU's compiled module on disk (path, size, mtime of each ``_icu_*``
    file of the first ``icu`` package on ``sys.path``), or None where that layout is absent.

    PyICU's ``ICU_VERSION`` is the ``U_ICU_VERSION`` its extension was compiled against, a
    constant of that file: the same file gives the same version."""
    for entry in sys.path:
        package = os.path.join(entry or os.getcwd(), "icu")
        if not os.path.isfile(os.path.join(package, "__init__.py")):
            continue
        parts = []
        for name in sorted(os.listdir(package)):
            if name.startswith("_icu_"):
                path = os.path.realpath(os.path.join(package, name))
                status = os.stat(path)
                parts.append(f"{path}\0{status.st_size}\0{status.st_mtime_ns}")
        return "\0".join(parts) if parts else None
    return None


def cached_icu_version() -> str:
    """:func:`~pytest_entropy.core.versions.icu_version`, without importing PyICU when an
    earlier run recorded the version for the same compiled PyICU (issue 32: importing it costs
    more than the interpreter's own start-up). The record sits beside the bytecode and is
    written only where bytecode would be; any doubt imports PyICU."""
    try:
        key = _icu_extension_key()
    except OSError:
        key = None
    if key is None or sys.dont_write_bytecode or sys.pycache_prefix is not None:
        return icu_version()
    try:
        with open(_ICU_CACHE, encoding="utf-8") as cache:
            recorded_key, _, recorded = cache.read().rpartition("\n")
        if recorded_key == key and recorded:
            return recorded
    except (OSError, ValueError):
        pass
    version = icu_version()
    if "\n" not in version:
        try:
            os.makedirs(os.path.dirname(_ICU_CACHE), exist_ok=True)
            temporary = f"{_ICU_CACHE}.{os.getpid()}"
            with open(temporary, "w", encoding="utf-8") as cache:
                cache.write(f"{key}\n{version}")
            os.replace(temporary, _ICU_CACHE)
        except OSError:
            pass
    return version


def native_core_text() -> str:
    """``native core: loaded``, or why the plain Python runs instead."""
    from pytest_entropy.core.native_core import core, core_available

    if core() is not None:
        return "native core: loaded (pytest_entropy._core)"
    if core_available():
        # Either variable refuses the core (pytest_entropy/__init__); name the one set.
        refused = "PYTEST_ENTROPY_PURE"
        if os.environ.get(refused, "").strip() in ("", "0") and os.environ.get(
            "PYTEST_ENTROPY_NO_NATIVE", ""
        ).strip() not in ("", "0"):
            refused = "PYTEST_ENTROPY_NO_NATIVE"
        return f"native core: off ({refused}=1), the plain Python runs"
    return "native core: not installed, the plain Python runs"
