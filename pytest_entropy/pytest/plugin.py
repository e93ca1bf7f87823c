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
from itertools import pairwise
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
    from pathlib import Path

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
    taken = _rootdir_from_an_option_value(config)
    if taken is not None:
        config.issue_config_time_warning(pytest.PytestConfigWarning(taken), stacklevel=2)
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


def _rootdir_from_an_option_value(config: pytest.Config) -> str | None:
    """Why the rootdir looks chosen from a path option's value, if it does: pytest picks the
    rootdir before any plugin's options exist, so ``--sessions DIR`` (a space, not ``=``)
    counts DIR as a test path there. A corpus outside the project then becomes the rootdir:
    the project's configuration goes unread and its ratchet baseline unused."""
    from pytest_entropy.state.option_table import OPTIONS

    params = config.invocation_params
    args = [str(arg) for arg in params.args]
    if any(arg == "--rootdir" or arg.startswith("--rootdir=") for arg in args):
        return None
    flags = {entry.flag for entry in OPTIONS if entry.kind == "path"}
    flags |= {entry.bare_flag for entry in OPTIONS if entry.kind == "path" and entry.bare}
    spaced = [
        f"{flag} {value}"
        for flag, value in pairwise(args)
        if flag in flags and not value.startswith("-")
    ]
    if not spaced:
        return None
    project = _nearest_configuration(params.dir)
    if project is None or project.parent == config.rootpath:
        return None
    return (
        f"pytest took its rootdir ({config.rootpath}) from '{spaced[0]}' before reading"
        f" plugin options, so {project} was not read (nor the ratchet baseline beside it);"
        f" write the option with '=' ({spaced[0].replace(' ', '=', 1)})"
    )


# Where pytest reads its configuration from, and what marks a file as pytest's.
_CONFIG_FILES: Final = (
    ("pytest.ini", ""),
    (".pytest.ini", ""),
    ("pyproject.toml", "[tool.pytest.ini_options]"),
    ("tox.ini", "[pytest]"),
    ("setup.cfg", "[tool:pytest]"),
)


def _nearest_configuration(start: Path) -> Path | None:
    """The pytest configuration file a run from ``start`` without arguments would read."""
    for directory in (start, *start.parents):
        for name, marker in _CONFIG_FILES:
            candidate = directory / name
            try:
                if candidate.is_file() and (
                    not marker or marker in candidate.read_text(encoding="utf-8")
                ):
                    return candidate
            except (OSError, UnicodeDecodeError):
                continue
    return None


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
