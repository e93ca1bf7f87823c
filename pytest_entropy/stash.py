"""Typed per-run state of the pytest plugin (``config.stash`` keys)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from .options import EntropySettings

if TYPE_CHECKING:
    from .pytest_session import EntropySession

__all__ = ["SESSION_KEY", "SETTINGS_KEY"]

SETTINGS_KEY: pytest.StashKey[EntropySettings] = pytest.StashKey()
SESSION_KEY: pytest.StashKey[EntropySession] = pytest.StashKey()
