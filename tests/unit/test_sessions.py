"""Session discovery and windows on a real file system (spec §4.2, V2-CV-27 #1-#2)."""

from __future__ import annotations

import errno
import gzip
import os
from pathlib import Path

import pytest

from pytest_entropy.core.errors import EntropyInputError
from pytest_entropy.sources.agent_dir import (
    encode_project_dir,
    machine_session_files,
    project_session_files,
)
from pytest_entropy.sources.locate import (
    directory_session_files,
    expand_session_paths,
    session_listing,
)
from pytest_entropy.sources.scan import meter_source

YEAR = {2019: 1546300800, 2020: 1577836800, 2021: 1609459200, 2022: 1640995200}


def session(agent: Path, cwd: str, name: str, year: int) -> Path:
    directory = agent / "sessions" / encode_project_dir(cwd)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text("{}\n", encoding="utf-8")
    os.utime(path, (YEAR[year], YEAR[year]))
    return path


def test_pi_directory_encoding() -> None:
    assert encode_project_dir("/home/me/app") == "--home-me-app--"
    assert encode_project_dir("/work/a:b") == "--work-a-b--"


def test_project_files_newest_first_and_limited(tmp_path: Path) -> None:
    old = session(tmp_path, "/repo/a", "old.jsonl", 2020)
    new = session(tmp_path, "/repo/a", "new.jsonl", 2021)
    assert [f.path for f in project_session_files(tmp_path, "/repo/a")] == [new, old]
    assert [f.path for f in project_session_files(tmp_path, "/repo/a", 1)] == [new]
    assert project_session_files(tmp_path, "/unknown") == []


def test_machine_window_order_limit_and_current_project(tmp_path: Path) -> None:
    repo_a = session(tmp_path, "/repo", "a.jsonl", 2020)
    repo_b = session(tmp_path, "/repo", "b.jsonl", 2021)
    other_a = session(tmp_path, "/other", "a.jsonl", 2022)
    other_b = session(tmp_path, "/other", "b.jsonl", 2019)
    window = [f.path for f in machine_session_files(tmp_path, None)]
    assert window == [other_a, repo_b, repo_a, other_b]
    assert [f.path for f in machine_session_files(tmp_path, None, 2)] == [other_a, repo_b]


def test_crowded_out_current_project_is_kept(tmp_path: Path) -> None:
    quiet = session(tmp_path, "/quiet", "q.jsonl", 2020)
    session(tmp_path, "/busy", "b.jsonl", 2021)
    assert [f.path for f in machine_session_files(tmp_path, "/quiet", 1)] == [quiet]


def test_equal_mtimes_break_ties_by_path(tmp_path: Path) -> None:
    first = session(tmp_path, "/a", "a.jsonl", 2020)
    second = session(tmp_path, "/b", "b.jsonl", 2020)
    assert [f.path for f in machine_session_files(tmp_path, None)] == [first, second]


def test_absent_sessions_root(tmp_path: Path) -> None:
    assert machine_session_files(tmp_path / "nothing", "/x") == []


def test_directory_expansion_sorts_by_code_units(tmp_path: Path) -> None:
    for name in ["b.jsonl", "\U0001f600.jsonl", "\uffff.jsonl", "a.jsonl", "notes.txt"]:
        (tmp_path / name).write_text("", encoding="utf-8")
    names = [p.name for p in expand_session_paths([tmp_path])]
    assert names == ["a.jsonl", "b.jsonl", "\U0001f600.jsonl", "\uffff.jsonl"]


def test_missing_path_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(EntropyInputError, match="no such file"):
        expand_session_paths([tmp_path / "missing.jsonl"])


def test_a_path_that_cannot_be_examined_is_an_input_error_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A directory on the way without search permission (root cannot make one, so the stat
    # fails here as it would there): named as unreadable, not as missing, on every Python.
    blocked = str(tmp_path / "locked" / "a.jsonl")
    real_stat = os.stat

    def stat(path: object, *args: object, **kwargs: object) -> os.stat_result:
        if os.fspath(path) == blocked:  # type: ignore[call-overload]
            raise PermissionError(errno.EACCES, "Permission denied", blocked)
        return real_stat(path, *args, **kwargs)  # type: ignore[call-overload, no-any-return]

    monkeypatch.setattr(os, "stat", stat)
    with pytest.raises(EntropyInputError, match="cannot read: Permission denied") as caught:
        expand_session_paths([blocked])
    assert caught.value.source == blocked
    # A name with a NUL in it is no file, as pathlib said.
    with pytest.raises(EntropyInputError, match="no such file"):
        expand_session_paths(["a\x00b.jsonl"])


def test_a_named_path_keeps_the_text_pathlib_gives_it(
    tmp_path: Path, demo_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = sorted((demo_dir / "sessions").glob("*.jsonl"))[0]
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / source.name).write_bytes(source.read_bytes())
    monkeypatch.chdir(tmp_path)
    given = ["./s//" + source.name, "s/./", str(tmp_path) + "//s/"]
    listed = session_listing(given).files
    assert listed == [f"s/{source.name}", f"s/{source.name}", f"{tmp_path}/s/{source.name}"]
    assert all(type(name) is str for name in listed)


def test_gzip_sessions_read_transparently(tmp_path: Path, demo_dir: Path) -> None:
    source = next(iter(sorted((demo_dir / "sessions").glob("*.jsonl"))))
    packed = tmp_path / (source.name + ".gz")
    packed.write_bytes(gzip.compress(source.read_bytes()))
    plain_state, _ = meter_source(source)
    packed_state, _ = meter_source(packed)
    assert plain_state is not None and packed_state is not None
    assert plain_state.finalize() == packed_state.finalize()
    assert [p.name for p in expand_session_paths([tmp_path])] == [packed.name]


def test_directory_window(tmp_path: Path) -> None:
    paths = []
    for index in range(10):
        path = tmp_path / f"s{index}.jsonl"
        path.write_text("", encoding="utf-8")
        os.utime(path, (YEAR[2019] + index, YEAR[2019] + index))
        paths.append(path)
    assert [f.path for f in directory_session_files(tmp_path)] == paths[::-1][:8]
