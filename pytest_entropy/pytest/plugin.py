"""The pytest plugin (entry point ``entropy``): hooks only, everything else delegated.

``pytest --entropy-certify`` runs the certification (spec §12) as one test item per check;
``--entropy-max-score``/``--entropy-baseline`` gate a sessions corpus; the fixtures
``entropy_surface``, ``entropy_sessions``, ``entropy_meter``, ``entropy_ratchet`` and
``entropy_snapshot`` serve tool authors. In a project that uses none of it the plugin
registers its options and stays silent; the metric is imported only when needed.
"""

from __future__ import annotations

import sys
from collections.abc import Generator
from typing import TYPE_CHECKING, Any, Final

import pytest

from pytest_entropy.pytest.fixtures import (
    entropy_meter,
    entropy_ratchet,
    entropy_sessions,
    entropy_snapshot,
    entropy_surface,
)
from pytest_entropy.pytest.options import add_bare_aliases, add_pytest_options, settings_from_pytest
from pytest_entropy.pytest.stash import GATE_LINE, RATCHET_NOTE, SETTINGS_KEY

if TYPE_CHECKING:
    from pytest_entropy.pytest.session import EntropySession
    from pytest_entropy.state.option_table import EntropySettings

# The user properties the session gathers for the terminal summary.
_SESSION_NOTES: Final = frozenset({RATCHET_NOTE, GATE_LINE})
# Whether this run pushed a session format for the assertion helpers (popped at the end).
_PUSHED_KEY: pytest.StashKey[bool] = pytest.StashKey()

__all__ = [
    "entropy_meter",
    "entropy_ratchet",
    "entropy_sessions",
    "entropy_snapshot",
    "entropy_surface",
    "pytest_addoption",
    "pytest_configure",
    "pytest_load_initial_conftests",
    "pytest_unconfigure",
]


def pytest_addoption(parser: pytest.Parser) -> None:
    add_pytest_options(parser)


@pytest.hookimpl(wrapper=True)
def pytest_load_initial_conftests(
    early_config: pytest.Config, parser: pytest.Parser, args: list[str]
) -> Generator[None, Any, Any]:
    # The bare spellings (--sessions, ...) are added only after every installed plugin and
    # the initial conftests registered theirs, and only where free: no clash, ever.
    result = yield
    add_bare_aliases(parser)
    return result


def pytest_configure(config: pytest.Config) -> None:
    settings = settings_from_pytest(config)
    config.stash[SETTINGS_KEY] = settings
    # What the assertion helpers read. "auto" is their default already: it is pushed only
    # over a format an enclosing run (pytester) configured, so a run that configures nothing
    # imports nothing for it.
    if (
        settings.session_format != "auto"
        or "pytest_entropy.testing.session_defaults" in sys.modules
    ):
        from pytest_entropy.testing.session_defaults import push_session_format

        push_session_format(settings.session_format)
        config.stash[_PUSHED_KEY] = True
    if settings.active:
        _start_session(config, settings)
    else:
        # No certification, gate or lint (most runs where the plugin is installed): the
        # session machinery waits until a report carries one of its notes (issue 32: a
        # trivial run within 5 % of one without the plugin).
        config.pluginmanager.register(_IdleSession(config, settings), "entropy-session")


def _start_session(config: pytest.Config, settings: EntropySettings) -> EntropySession:
    from pytest_entropy.pytest.session import SESSION_KEY, EntropySession

    session = EntropySession(config, settings)
    config.stash[SESSION_KEY] = session
    config.pluginmanager.register(session, "entropy-session")
    return session


class _IdleSession:
    """The run's ``entropy-session`` while nothing is configured: with default settings the
    session's only work is the lines of the ratchet fixture (and a gate item's), which reach
    it as user properties, on an xdist controller too. The first report carrying one starts
    the real session in its place and hands it that report."""

    def __init__(self, config: pytest.Config, settings: EntropySettings) -> None:
        self.config = config
        self.settings = settings

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if not any(name in _SESSION_NOTES for name, _ in report.user_properties):
            return
        self.config.pluginmanager.unregister(self, "entropy-session")
        _start_session(self.config, self.settings).pytest_runtest_logreport(report)


def pytest_unconfigure(config: pytest.Config) -> None:
    if config.stash.get(_PUSHED_KEY, False):
        from pytest_entropy.testing.session_defaults import pop_session_format

        pop_session_format()
