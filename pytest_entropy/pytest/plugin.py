"""The pytest plugin (entry point ``entropy``): hooks only, everything else delegated.

``pytest --entropy-certify`` runs the certification (spec §12) as one test item per check;
``--entropy-max-score``/``--entropy-baseline`` gate a sessions corpus; the fixtures
``entropy_surface``, ``entropy_sessions``, ``entropy_meter``, ``entropy_ratchet`` and
``entropy_snapshot`` serve tool authors. In a project that uses none of it the plugin
registers its options and stays silent; the metric is imported only when needed.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import pytest

from pytest_entropy.pytest.fixtures import (
    entropy_meter,
    entropy_ratchet,
    entropy_sessions,
    entropy_snapshot,
    entropy_surface,
)
from pytest_entropy.pytest.options import add_bare_aliases, add_pytest_options, settings_from_pytest
from pytest_entropy.pytest.stash import SETTINGS_KEY

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
    from pytest_entropy.pytest.session import SESSION_KEY, EntropySession

    settings = settings_from_pytest(config)
    config.stash[SETTINGS_KEY] = settings
    from pytest_entropy.testing.session_defaults import push_session_format

    push_session_format(settings.session_format)  # what the assertion helpers read
    session = EntropySession(config, settings)
    config.stash[SESSION_KEY] = session
    config.pluginmanager.register(session, "entropy-session")


def pytest_unconfigure(config: pytest.Config) -> None:
    if SETTINGS_KEY in config.stash:
        from pytest_entropy.testing.session_defaults import pop_session_format

        pop_session_format()
