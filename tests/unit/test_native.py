"""The native kernels' build: every built kernel is fresh, and each falls back cleanly."""

from __future__ import annotations

import importlib
import importlib.util
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from pytest_entropy.core import fastpath
from pytest_entropy.core.fastpath import kernel, use_fast_paths, use_native_kernels

ROOT = Path(__file__).resolve().parents[2]


def _hook_module():
    spec = importlib.util.spec_from_file_location(
        "_hatch_build_under_test", ROOT / "hatch_build.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


HOOK = _hook_module()
SOURCES = HOOK.kernel_sources(ROOT)
NAMES = [HOOK.module_name(source, ROOT) for source in SOURCES]


def test_the_kernels_are_found() -> None:
    assert SOURCES, "no pytest_entropy/**/_*_native.c found"
    assert all(name.startswith("pytest_entropy.") for name in NAMES)


@pytest.mark.parametrize("source", SOURCES, ids=NAMES)
def test_a_built_kernel_matches_its_source(source: Path) -> None:
    """A kernel compiled from an older version of its source is a failure, not a silent
    difference: rebuild with `python hatch_build.py`."""
    name = HOOK.module_name(source, ROOT)
    try:
        module = importlib.import_module(name)
    except ImportError:
        if os.environ.get("CI") and not os.environ.get(HOOK.SKIP_VARIABLE):
            pytest.fail(f"{name} was not built under CI (the build hook or the compiler failed)")
        pytest.skip(f"{name} is not built")
    assert HOOK.source_digest(source) == module.SOURCE_SHA256, (
        f"{name} is stale: its source changed after it was built; run `python hatch_build.py`"
    )


@pytest.mark.parametrize("name", NAMES)
def test_the_switches_refuse_a_kernel(name: str) -> None:
    short = name.removeprefix("pytest_entropy.")
    fast = use_fast_paths(False)
    try:
        assert kernel(short) is None
    finally:
        use_fast_paths(fast)
    native = use_native_kernels(False)
    try:
        assert kernel(short) is None
    finally:
        use_native_kernels(native)


def test_an_unknown_kernel_is_none() -> None:
    assert kernel("core._no_such_native") is None


def test_a_failing_compiler_is_reported_and_skipped(tmp_path: Path, monkeypatch) -> None:
    """The fallback of a machine without a compiler: nothing is built, nothing raises."""
    monkeypatch.setenv("CC", "/bin/false")
    monkeypatch.delenv(HOOK.SKIP_VARIABLE, raising=False)  # the skip would hide the failure
    said: list[str] = []
    built = HOOK.build_all(tmp_path, root=ROOT, log=said.append)
    assert built == {}
    assert any("the compiler failed" in line for line in said)


def test_a_missing_compiler_is_reported_and_skipped(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("CC", str(tmp_path / "no-such-cc"))
    monkeypatch.delenv(HOOK.SKIP_VARIABLE, raising=False)
    said: list[str] = []
    assert HOOK.build_all(tmp_path, root=ROOT, log=said.append) == {}
    assert any("did not run" in line for line in said)


def test_the_skip_variable_builds_nothing(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv(HOOK.SKIP_VARIABLE, "1")
    said: list[str] = []
    assert HOOK.build_all(tmp_path, root=ROOT, log=said.append) == {}
    assert said and HOOK.SKIP_VARIABLE in said[0]


@pytest.mark.skipif(not sysconfig.get_config_var("CC"), reason="no C compiler configured")
def test_a_kernel_builds_out_of_place(tmp_path: Path) -> None:
    """What the wheel build does: every kernel compiles into a scratch tree and imports from it
    with the digest of its source."""
    built = HOOK.build_all(tmp_path, root=ROOT, log=lambda _line: None)
    if not built:
        if os.environ.get("CI"):
            pytest.fail("no kernel compiled under CI")
        pytest.skip("no kernel compiled here")
    inside, path = next(iter(built.items()))
    name = inside.split(".")[0].replace("/", ".")
    code = (
        "import importlib.util, sys\n"
        f"spec = importlib.util.spec_from_file_location({name!r}, {str(path)!r})\n"
        "module = importlib.util.module_from_spec(spec)\n"
        "spec.loader.exec_module(module)\n"
        "print(module.SOURCE_SHA256)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    source = ROOT / (inside.split(".")[0] + ".c")
    assert done.stdout.strip() == HOOK.source_digest(source)


@pytest.mark.parametrize(
    ("implementation", "version", "supported"),
    [
        ("cpython", (3, 11, 7), True),
        ("cpython", (3, 12, 1), False),
        ("cpython", (3, 13, 0), False),
        ("pypy", (3, 11, 0), False),
    ],
)
def test_kernels_are_built_only_for_the_interpreter_they_read(
    implementation: str, version: tuple[int, ...], supported: bool
) -> None:
    # On CPython 3.12 and 3.13 the kernels aborted the interpreter (an int's size field
    # moved): the build skips them there and the runtime refuses a stale one by one rule.
    assert HOOK.kernels_supported(implementation, version) is supported
    assert HOOK.KERNEL_INTERPRETER == fastpath.KERNEL_INTERPRETER


def test_a_kernel_is_never_imported_on_another_interpreter(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(fastpath, "kernels_supported", lambda: False)
    assert kernel("ingest._guard_native") is None


def test_the_build_skips_every_kernel_on_another_interpreter(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(HOOK, "kernels_supported", lambda *arguments: False)
    monkeypatch.delenv(HOOK.SKIP_VARIABLE, raising=False)
    said: list[str] = []
    assert HOOK.build_all(tmp_path, root=ROOT, log=said.append) == {}
    assert not list(tmp_path.rglob("*.so"))
    assert said and "CPython 3.11 only" in said[0]
