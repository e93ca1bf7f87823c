"""Typed per-run state of the pytest plugin (``config.stash`` keys).

The key of the run's :class:`~pytest_entropy.pytest.session.EntropySession` lives beside
that class (``session.SESSION_KEY``), so this module and the session never import each
other.
"""

from __future__ import annotations

import pytest

from pytest_entropy.state.option_table import EntropySettings

__all__ = ["GATE_LINE", "RATCHET_NOTE", "SETTINGS_KEY"]

SETTINGS_KEY: pytest.StashKey[EntropySettings] = pytest.StashKey()
# The user property that carries a line for the entropy section of the terminal summary
# (here, not in gate_items.py, so the session reads it without importing the gate).
GATE_LINE = "entropy_gate_line"
# The user property the ratchet fixture's lines travel in (here for the same reason).
RATCHET_NOTE = "entropy_ratchet"
