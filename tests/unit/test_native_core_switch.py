"""The Rust core's switch: PYTEST_ENTROPY_PURE=1 turns it off, and a test can too."""

from __future__ import annotations

import subprocess
import sys

from pytest_entropy.core import native_core


def test_switch_refuses_the_core_and_restores_it() -> None:
    previous = native_core.use_native_core(False)
    try:
        assert native_core.core() is None
        assert native_core.native_core_enabled() is False
    finally:
        native_core.use_native_core(previous)
    assert native_core.native_core_enabled() is previous


def test_pure_environment_turns_the_core_off() -> None:
    code = "from pytest_entropy.core import native_core; print(native_core.native_core_enabled())"
    env = {"PYTEST_ENTROPY_PURE": "1", "PATH": "/usr/bin:/bin"}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "False"
    env["PYTEST_ENTROPY_PURE"] = "0"
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "True"
