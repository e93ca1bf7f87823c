"""The versions a result depends on: the metric generation and the ICU library.

Kept apart from the records and the hashing code so that ``pytest-entropy --version`` can
name them without importing either (issue 32: the version line costs a start-up only).
"""

from __future__ import annotations

__all__ = ["ENTROPY_METRIC_VERSION", "icu_version"]

ENTROPY_METRIC_VERSION = 2


def icu_version() -> str:
    """The ICU version behind the stable hash's key order."""
    import icu

    return str(icu.ICU_VERSION)
