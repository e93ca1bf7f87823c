"""The build backend (build_backend/entropy_build.py) and the one version.

The real builds (maturin's abi3 wheel, the pure wheel without cargo, the sdist) run in
``.ci/run``, which needs the network for the build requirements; these tests check, without
building, the choices the backend makes and the wheel surgery that ships the corpora.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import re
import sys
import tomllib
import zipfile
from pathlib import Path
from types import ModuleType

import pytest

from pytest_entropy._version import __version__

REPO = Path(__file__).resolve().parents[2]


def _load_backend() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "entropy_build", REPO / "build_backend" / "entropy_build.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("entropy_build", module)
    spec.loader.exec_module(module)
    return module


backend = _load_backend()
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))


def _cargo_version() -> str:
    cargo = tomllib.loads((REPO / "native" / "Cargo.toml").read_text(encoding="utf-8"))
    return str(cargo["package"]["version"])


def test_one_version_for_maturin_hatchling_and_the_package() -> None:
    # maturin reads Cargo.toml's [package] version; hatchling reads the same file through
    # its pattern; --version prints _version.py's. All three must be one number.
    assert PYPROJECT["project"]["dynamic"] == ["version"]
    hatch = PYPROJECT["tool"]["hatch"]["version"]
    assert hatch["path"] == "native/Cargo.toml"
    text = (REPO / hatch["path"]).read_text(encoding="utf-8")
    found = re.search(hatch["pattern"], text)
    assert found is not None
    assert found.group("version") == _cargo_version() == __version__


def test_pyproject_builds_through_the_wrapper_backend() -> None:
    system = PYPROJECT["build-system"]
    assert system["build-backend"] == "entropy_build"
    assert system["backend-path"] == ["build_backend"]
    maturin = PYPROJECT["tool"]["maturin"]
    assert maturin["manifest-path"] == "native/Cargo.toml"
    assert maturin["module-name"] == "pytest_entropy._core"
    assert maturin["features"] == ["python"]
    assert maturin["compatibility"] == "pypi"


def test_maturin_gets_an_index_compatible_tag_unless_the_caller_chose_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("MATURIN_PEP517_ARGS", raising=False)
    assert backend.maturin_settings(None) == {"maturin.build-args": ["--compatibility", "pypi"]}
    assert backend.maturin_settings({"native": "true", "other": "x"}) == {
        "other": "x",
        "maturin.build-args": ["--compatibility", "pypi"],
    }
    chosen = backend.maturin_settings({"build-args": "--zig --compatibility manylinux2014"})
    assert chosen == {"maturin.build-args": ["--zig", "--compatibility", "manylinux2014"]}
    listed = backend.maturin_settings({"maturin.build-args": ["--compatibility=linux"]})
    assert listed == {"maturin.build-args": ["--compatibility=linux"]}
    # The environment variable maturin itself reads is kept (settings would override it).
    monkeypatch.setenv("MATURIN_PEP517_ARGS", "--profile dev")
    assert backend.maturin_settings({}) == {
        "maturin.build-args": ["--compatibility", "pypi", "--profile", "dev"]
    }
    monkeypatch.setenv("MATURIN_PEP517_ARGS", "--manylinux off")
    assert backend.maturin_settings({}) == {"maturin.build-args": ["--manylinux", "off"]}


def test_without_cargo_the_pure_wheel_is_built(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(backend.shutil, "which", lambda name: None)
    assert not backend.cargo_usable()
    assert backend.get_requires_for_build_wheel(None) == [backend.HATCHLING]
    assert backend.get_requires_for_build_editable({}) == [backend.HATCHLING]
    assert backend.get_requires_for_build_sdist(None) == [backend.HATCHLING]
    with pytest.raises(backend.BuildChoiceError, match="cargo does not run here"):
        backend.wants_native({"native": "true"})


def test_a_cargo_that_does_not_run_counts_as_absent(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    broken = tmp_path / "cargo"
    broken.write_text("#!/bin/sh\nexit 1\n")
    broken.chmod(0o755)
    monkeypatch.setattr(backend.shutil, "which", lambda name: str(broken))
    assert not backend.cargo_usable()
    liar = tmp_path / "liar"
    liar.write_text("#!/bin/sh\necho hello\n")
    liar.chmod(0o755)
    monkeypatch.setattr(backend.shutil, "which", lambda name: str(liar))
    assert not backend.cargo_usable()


def test_the_choice_of_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(backend, "cargo_usable", lambda: True)
    assert backend.get_requires_for_build_wheel(None) == [backend.MATURIN]
    assert backend.get_requires_for_build_wheel({"native": "auto"}) == [backend.MATURIN]
    assert backend.get_requires_for_build_wheel({"native": "false"}) == [backend.HATCHLING]
    assert backend.get_requires_for_build_wheel({"native": "True"}) == [backend.MATURIN]
    # The sdist is one on every machine: hatchling's, the crate inside.
    assert backend.get_requires_for_build_sdist(None) == [backend.HATCHLING]
    with pytest.raises(backend.BuildChoiceError, match="expected true, false or auto"):
        backend.wants_native({"native": "maybe"})


def _hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    return "sha256=" + digest.decode()


def _wheel(path: Path) -> Path:
    with zipfile.ZipFile(path, "w") as wheel:
        rows = []
        for name, data in (("pkg/__init__.py", b"VALUE = 1\n"), ("pkg-1.0.dist-info/WHEEL", b"")):
            wheel.writestr(name, data)
            rows.append(f"{name},{_hash(data)},{len(data)}\n")
        wheel.writestr("pkg-1.0.dist-info/RECORD", "".join(rows) + "pkg-1.0.dist-info/RECORD,,\n")
    return path


def test_the_corpora_are_added_to_a_wheel_with_their_record_lines(tmp_path: Path) -> None:
    wheel = _wheel(tmp_path / "pkg-1.0-py3-none-any.whl")
    source = tmp_path / "corpora"
    (source / "demo").mkdir(parents=True)
    (source / "demo" / "surface.json").write_bytes(b'{"tools":[]}\n')
    (source / "top.txt").write_bytes(b"top")
    assert backend.add_tree_to_wheel(wheel, source, "pkg/corpora") == 2
    with zipfile.ZipFile(wheel) as done:
        names = done.namelist()
        assert names[-1] == "pkg-1.0.dist-info/RECORD"
        assert done.read("pkg/corpora/demo/surface.json") == b'{"tools":[]}\n'
        rows = [line.split(",") for line in done.read(names[-1]).decode().splitlines()]
        listed = {row[0]: row for row in rows}
        assert set(listed) == set(names)
        for name in names:
            if name.endswith("RECORD"):
                assert listed[name][1:] == ["", ""]
                continue
            data = done.read(name)
            assert listed[name][1:] == [_hash(data), str(len(data))]
    # Adding the same files again is refused rather than giving a wheel with two copies.
    with pytest.raises(ValueError, match=r"already has pkg/corpora/demo/surface\.json"):
        backend.add_tree_to_wheel(wheel, source, "pkg/corpora")


def test_an_empty_corpora_folder_fails_the_build(tmp_path: Path) -> None:
    wheel = _wheel(tmp_path / "pkg-1.0-py3-none-any.whl")
    (tmp_path / "corpora").mkdir()
    with pytest.raises(FileNotFoundError, match="no files to ship"):
        backend.add_tree_to_wheel(wheel, tmp_path / "corpora", "pkg/corpora")


def test_every_shipped_corpus_file_is_in_the_sdist_and_both_wheels() -> None:
    # The pure wheel's force-include and the native wheel's surgery ship the same folder;
    # the sdist carries it (and the crate) so a wheel built from the sdist can too.
    hatch = PYPROJECT["tool"]["hatch"]["build"]["targets"]
    assert hatch["wheel"]["force-include"] == {backend.CORPORA_SOURCE: backend.CORPORA_IN_WHEEL}
    included = set(hatch["sdist"]["include"])
    for needed in ("corpora", "build_backend", "native/Cargo.toml", "native/Cargo.lock"):
        assert needed in included
    assert (REPO / "native" / "src").is_dir() and "native/src" in included


def test_cibuildwheel_builds_abi3_once_and_free_threaded_version_specific() -> None:
    # One cp311 build per platform/arch serves every later GIL-enabled CPython (abi3);
    # free-threaded CPython has no stable ABI before 3.15, so it has its own build, and the
    # module says it does not need the GIL (else the interpreter re-enables it and warns).
    config = PYPROJECT["tool"]["cibuildwheel"]
    assert config["build"] == ["cp311-*", "cp314t-*"]
    assert any("check_wheel.py" in command for command in config["test-command"])
    cargo = tomllib.loads((REPO / "native" / "Cargo.toml").read_text(encoding="utf-8"))
    assert "abi3-py311" in cargo["dependencies"]["pyo3"]["features"]
    binding = (REPO / "native" / "src" / "python.rs").read_text(encoding="utf-8")
    assert "gil_used = false" in binding


def test_no_c_kernel_and_no_hand_made_build_remain() -> None:
    # Issue 28: the Rust core replaces the C kernels; nothing builds or asks for them, and
    # the switch that chose between them and the Python fast paths is gone with them.
    assert sorted(REPO.glob("pytest_entropy/**/*.c")) == []
    assert not (REPO / "hatch_build.py").exists()
    sources = [path.read_text(encoding="utf-8") for path in REPO.glob("pytest_entropy/**/*.py")]
    assert not [text for text in sources if "def kernel(" in text or "def fast_paths(" in text]
    assert "hatch_build.py" not in (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert "hatch_build" not in (REPO / "pyproject.toml").read_text(encoding="utf-8")


def test_the_build_constraints_pin_what_the_backend_asks_for() -> None:
    # .ci/wheels builds with --build-constraint constraints/build.txt: the pins must lie in
    # the ranges the backend requests, or pip cannot resolve the isolated build environment.
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    pins = {}
    for raw in (REPO / "constraints" / "build.txt").read_text(encoding="utf-8").splitlines():
        line = raw.split("#", 1)[0].strip()
        if line:
            requirement = Requirement(line)
            (specifier,) = requirement.specifier
            assert specifier.operator == "==", line
            pins[canonicalize_name(requirement.name)] = specifier.version
    for asked in (backend.MATURIN, backend.HATCHLING):
        requirement = Requirement(asked)
        assert requirement.specifier.contains(pins[canonicalize_name(requirement.name)]), asked
    for tool in ("auditwheel", "twine", "build", "cibuildwheel"):
        assert tool in pins
