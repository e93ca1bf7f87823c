"""The Rust core's allocator (native/src/alloc.rs): mimalloc 2, purging freed memory at once.

The purge delay is set through an option index the mimalloc crate does not name; reading
that index's default in a fresh process (10 ms, mimalloc 2's documented default) checks
the index is the purge delay, and an environment setting must still win over ours.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.native_core_support import native_core_module

_REPORT = "import json; from pytest_entropy import _core; print(json.dumps(_core.allocator()))"


def _allocator_in_a_fresh_process(**env: str) -> dict[str, object]:
    native_core_module()  # skips (fails under CI) without the extension
    clean = {key: value for key, value in os.environ.items() if not key.startswith("MIMALLOC_")}
    out = subprocess.run(
        [sys.executable, "-c", _REPORT],
        env={**clean, **env},
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stderr == ""
    report: dict[str, object] = json.loads(out.stdout)
    return report


def test_the_core_purges_freed_memory_without_delay() -> None:
    report = _allocator_in_a_fresh_process()
    assert report["name"] == "mimalloc"
    version = report["version"]
    assert isinstance(version, int) and 20000 <= version < 30000  # mimalloc 2.x
    assert report["purge_delay_default"] == 10  # the index set is mimalloc's purge delay
    assert report["purge_delay"] == 0


def test_the_environment_still_decides_the_purge_delay() -> None:
    report = _allocator_in_a_fresh_process(MIMALLOC_PURGE_DELAY="25")
    assert report["purge_delay_default"] == 25
    assert report["purge_delay"] == 25
