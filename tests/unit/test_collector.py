"""The relaxed collector: raised for a block, restored after, nested blocks and a disabled
collector left alone; and a command's result does not depend on it."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from pytest_entropy.run.collector import READ_THRESHOLD, relaxed_collector


@pytest.fixture
def thresholds() -> Iterator[tuple[int, int, int]]:
    saved = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    try:
        yield gc.get_threshold()
    finally:
        gc.set_threshold(*saved)


def test_the_threshold_is_raised_and_restored(thresholds: tuple[int, int, int]) -> None:
    with relaxed_collector():
        assert gc.get_threshold() == (READ_THRESHOLD, 10, 10)
        with relaxed_collector():
            assert gc.get_threshold() == (READ_THRESHOLD, 10, 10)
        assert gc.get_threshold() == (READ_THRESHOLD, 10, 10)
    assert gc.get_threshold() == thresholds


def test_restored_after_an_error(thresholds: tuple[int, int, int]) -> None:
    with pytest.raises(ZeroDivisionError), relaxed_collector():
        _ = 1 / 0
    assert gc.get_threshold() == thresholds


def test_a_disabled_threshold_stays_disabled(thresholds: tuple[int, int, int]) -> None:
    gc.set_threshold(0, 10, 10)
    with relaxed_collector():
        assert gc.get_threshold() == (0, 10, 10)
    assert gc.get_threshold() == (0, 10, 10)


def test_a_choice_made_inside_the_block_is_kept(thresholds: tuple[int, int, int]) -> None:
    with relaxed_collector():
        gc.set_threshold(5000, 10, 10)
    assert gc.get_threshold() == (5000, 10, 10)


def test_the_collector_still_runs(thresholds: tuple[int, int, int]) -> None:
    """Raised, not disabled: cycles made inside the block are still collected."""
    collected: list[int] = []

    def heard(phase: str, info: dict[str, int]) -> None:
        if phase == "stop":
            collected.append(info["generation"])

    gc.callbacks.append(heard)
    try:
        with relaxed_collector():
            for _ in range(3 * READ_THRESHOLD):
                cell: list[object] = []
                cell.append(cell)
    finally:
        gc.callbacks.remove(heard)
    assert collected, "no collection ran during the block"
