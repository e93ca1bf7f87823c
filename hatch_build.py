"""Optional native kernels: a hatchling build hook, and a script that builds them in place.

Every ``pytest_entropy/**/_*_native.c`` is one CPython extension module of the same dotted
name (``pytest_entropy/ingest/_guard_native.c`` -> ``pytest_entropy.ingest._guard_native``).
Each one is an accelerator beside plain Python code that computes the same bytes; a machine
that cannot compile them installs and runs the Python code instead.

* ``pip install .`` / ``pip install -e .``: hatchling runs :class:`NativeBuildHook`. A wheel
  gets the compiled modules (and a platform tag); an editable install gets them next to
  their sources (ignored by git), where the source tree imports them.
* ``python hatch_build.py``: rebuild them in place after editing a ``.c`` file (a stale
  build is a failing test, ``tests/unit/test_native.py``, never a silent difference).
* ``PYTEST_ENTROPY_NO_NATIVE=1`` at build time skips them (the fallback a machine without
  a compiler takes); a failed compile is reported and skipped the same way.

The compiler is called directly with the flags CPython was built with (``sysconfig``), so
the build needs no setuptools.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent
PACKAGE = "pytest_entropy"
SKIP_VARIABLE = "PYTEST_ENTROPY_NO_NATIVE"
# The kernels read CPython 3.11's object layouts; on 3.12 and 3.13 they abort the interpreter
# (an int's size field moved), so other interpreters build none and run the Python code.
# pytest_entropy/core/fastpath.py refuses a kernel built elsewhere by the same rule.
KERNEL_INTERPRETER = ("cpython", (3, 11))


def kernels_supported(
    implementation: str | None = None, version: tuple[int, ...] | None = None
) -> bool:
    """Whether the running (or the given) interpreter is the one the kernels are written for."""
    name = sys.implementation.name if implementation is None else implementation
    numbers = tuple(sys.version_info[:2]) if version is None else tuple(version[:2])
    return (name, numbers) == KERNEL_INTERPRETER


def kernel_sources(root: Path = ROOT) -> list[Path]:
    """Every native kernel's C source, in a stable order."""
    return sorted((root / PACKAGE).rglob("_*_native.c"))


def module_name(source: Path, root: Path = ROOT) -> str:
    return ".".join(source.relative_to(root).with_suffix("").parts)


def source_digest(source: Path) -> str:
    """The SHA-256 of a kernel's source, compiled into it as ``SOURCE_SHA256``."""
    return hashlib.sha256(source.read_bytes()).hexdigest()


def _compiler_command(source: Path, output: Path) -> list[str]:
    cc = os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc"
    ldshared = sysconfig.get_config_var("LDSHARED") or f"{cc} -shared"
    # LDSHARED names the compiler driver with its shared-object flags (``gcc -shared ...``);
    # an explicit CC replaces its first word, as distutils does.
    link = shlex.split(ldshared)
    if os.environ.get("CC"):
        link = [*shlex.split(cc), *link[1:]]
    include = sysconfig.get_paths()["include"]
    flags = ["-O2", "-fPIC", "-std=c99", "-Wall", "-Wno-unused-function", "-fno-strict-aliasing"]
    digest = source_digest(source)
    return [
        *link,
        *flags,
        f"-I{include}",
        f'-DPE_SOURCE_SHA256="{digest}"',
        str(source),
        "-o",
        str(output),
    ]


def build_kernel(source: Path, output: Path, *, log: Any = None) -> bool:
    """Compile one kernel to ``output``; False (with the compiler's words) when it cannot."""
    command = _compiler_command(source, output)
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    except (OSError, subprocess.SubprocessError) as error:
        _say(log, f"native kernel {source.name} skipped: the compiler did not run ({error})")
        return False
    if done.returncode != 0 or not output.is_file():
        detail = (done.stderr or done.stdout).strip().splitlines()[-12:]
        _say(log, f"native kernel {source.name} skipped: the compiler failed")
        for line in detail:
            _say(log, "    " + line)
        return False
    return True


def build_all(target: Path | None = None, *, root: Path = ROOT, log: Any = None) -> dict[str, Path]:
    """Build every kernel; ``target=None`` builds next to the sources (in place).

    Returns ``{path inside the wheel: built file}`` for what compiled.
    """
    built: dict[str, Path] = {}
    if os.environ.get(SKIP_VARIABLE, "").strip() not in ("", "0"):
        _say(log, f"native kernels skipped ({SKIP_VARIABLE} is set): the Python code is used")
        return built
    if not kernels_supported():
        _say(
            log,
            "native kernels skipped: they are written for CPython 3.11 only; "
            f"{sys.implementation.name} {sys.version_info[0]}.{sys.version_info[1]} "
            "runs the Python code (same bytes)",
        )
        return built
    suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    for source in kernel_sources(root):
        relative = source.relative_to(root).with_suffix("")
        inside = relative.as_posix() + suffix
        output = (root if target is None else target) / inside
        output.parent.mkdir(parents=True, exist_ok=True)
        if build_kernel(source, output, log=log):
            built[inside] = output
    return built


def _say(log: Any, text: str) -> None:
    if log is None:
        print(text, file=sys.stderr)
    else:
        log(text)


try:
    from hatchling.builders.hooks.plugin.interface import BuildHookInterface
except ImportError:  # running as a script without hatchling: only the in-place build
    BuildHookInterface = object


class NativeBuildHook(BuildHookInterface):  # type: ignore[misc,valid-type]
    """Compiles the kernels into the wheel (or beside the sources for an editable install)."""

    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel":
            return
        root = Path(self.root)
        log = self.app.display_warning
        if version == "editable":
            built = build_all(None, root=root, log=log)
        else:
            self._scratch = tempfile.TemporaryDirectory(prefix="pytest-entropy-native-")
            built = build_all(Path(self._scratch.name), root=root, log=log)
            for inside, path in built.items():
                build_data["force_include"][str(path)] = inside
        if built and version != "editable":
            build_data["pure_python"] = False
            build_data["infer_tag"] = True

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        scratch = getattr(self, "_scratch", None)
        if scratch is not None:
            scratch.cleanup()


if __name__ == "__main__":
    done = build_all()
    names = ", ".join(module_name(ROOT / inside.split(".")[0]) for inside in done) or "none"
    print(f"built {len(done)} of {len(kernel_sources())} native kernels in place: {names}")
    sys.exit(0 if len(done) == len(kernel_sources()) else 1)
