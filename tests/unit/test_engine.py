"""Engines give the same report and diagnostics as one sequential pass."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_entropy.core.meter import report_hash
from pytest_entropy.run import executor as engine
from pytest_entropy.sources.locate import expand_session_paths
from tests.distributed_support import measured


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_process_pool_matches_local(
    method: str, demo_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = tmp_path / "zz-broken.jsonl.gz"
    broken.write_bytes(b"not gzip at all")
    paths = [*expand_session_paths([demo_dir / "sessions"]), broken]
    local = measured(paths)
    monkeypatch.setattr(engine, "_start_method", lambda: method)
    pooled = measured(paths, jobs=2, engine="processes")
    assert report_hash(pooled.state.finalize()) == report_hash(local.state.finalize())
    assert pooled.diagnostics.to_json() == local.diagnostics.to_json()
    assert local.diagnostics.unreadable_files == 1


def test_unknown_engine() -> None:
    with pytest.raises(ValueError, match="unknown engine"):
        measured([], engine="cluster")


def test_an_error_handed_over_as_a_result_is_raised_by_the_future() -> None:
    # distributed's as_completed(with_results=True) may pass a task's error triple through
    # as the result when the future's status moved on under load; the future decides.
    import sys

    from pytest_entropy.run.executor import _settled

    class _Future:
        def __init__(self, outcome: object) -> None:
            self.outcome = outcome

        def result(self) -> object:
            if isinstance(self.outcome, BaseException):
                raise self.outcome
            return self.outcome

    try:
        raise RuntimeError("boom at 3")
    except RuntimeError:
        triple = sys.exc_info()
    with pytest.raises(RuntimeError, match="boom at 3"):
        _settled(_Future(triple[1]), triple)
    assert _settled(_Future(5), triple) == 5  # a rerun that succeeded gives its value
    assert _settled(_Future(None), (1, 2, 3)) == (1, 2, 3)  # a plain tuple is a result
    assert _settled(_Future(None), 7) == 7
