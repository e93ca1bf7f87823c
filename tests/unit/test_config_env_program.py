"""``PYTEST_ENTROPY_PURE`` is a switch of the program, not a project setting: the settings
check neither refuses nor shows it, while a misspelt setting variable is still an error."""

from __future__ import annotations

import pytest

from pytest_entropy.core.errors import EntropyInputError
from pytest_entropy.state.settings import environment_settings


def test_the_pure_switch_is_not_a_setting() -> None:
    assert environment_settings({"PYTEST_ENTROPY_PURE": "1"}) == {}
    with pytest.raises(EntropyInputError, match="PYTEST_ENTROPY_PURES"):
        environment_settings({"PYTEST_ENTROPY_PURES": "1"})
