"""Session files behind fsspec URLs: native expansion rules, streaming reads, same hash."""

from __future__ import annotations

import json
import sys
import uuid
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_entropy.cli.app import main
from pytest_entropy.core.errors import EntropyInputError
from pytest_entropy.core.meter import report_hash
from pytest_entropy.ingest import registry as sessions
from pytest_entropy.ingest.base import ReadOptions, SessionFormat
from pytest_entropy.ingest.diagnostics import ScanDiagnostics
from pytest_entropy.sources.locate import expand_session_paths, expand_session_sources
from pytest_entropy.sources.scan import meter_source
from pytest_entropy.sources.urls import expand_url, is_url
from tests.dask_support import in_process_cluster, session_text, write_mixed_corpus
from tests.distributed_support import measured

fsspec = pytest.importorskip("fsspec", reason='needs pip install -e ".[dask]"')

NATIVE = ReadOptions(session_format="fabric")


@pytest.fixture
def memory_root() -> Iterator[str]:
    """A fresh directory on fsspec's process-wide in-memory filesystem."""
    root = f"memory://entropy-{uuid.uuid4().hex}"
    yield root
    filesystem = fsspec.filesystem("memory")
    if filesystem.exists(root):
        filesystem.rm(root, recursive=True)


def put(url: str, data: bytes) -> None:
    with fsspec.open(url, "wb") as stream:
        stream.write(data)


def fingerprint(sources: list[Any], **options: Any) -> tuple[str, dict[str, Any]]:
    result = measured(sources, **options)
    diagnostics = result.diagnostics.to_json()
    # Sample lines and file names name the file as given (path or URL); everything else
    # must agree.
    for key in ("samples", "unreadableNames", "unrecognizedNames"):
        diagnostics[key] = [item.rsplit("/", 1)[-1] for item in diagnostics[key]]
    return report_hash(result.state.finalize()), diagnostics


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("s3://bucket/sessions/", True),
        ("memory://corpus/a.jsonl", True),
        ("file:///tmp/a.jsonl", True),
        ("simplecache::s3://bucket/a.jsonl", True),
        ("sessions/a.jsonl", False),
        ("/abs/a.jsonl", False),
        ("C:\\sessions\\a.jsonl", False),
        ("weird:name.jsonl", False),
        (Path("s3://not-a-url-as-a-path"), False),
    ],
)
def test_is_url(source: Any, expected: bool) -> None:
    assert is_url(source) is expected


def test_directory_expands_like_a_local_directory(memory_root: str, tmp_path: Path) -> None:
    # U+1F600 is a surrogate pair (D83D DE00) and sorts before U+FF5E in UTF-16 code units,
    # although it comes after it in code points.
    names = ["b.jsonl", "a.jsonl.gz", "\uff5e.jsonl", "\U0001f600.jsonl", "B.jsonl", "é.jsonl"]
    for name in names:
        put(f"{memory_root}/{name}", b"")
        (tmp_path / name).write_bytes(b"")
    put(f"{memory_root}/notes.txt", b"")
    put(f"{memory_root}/nested/c.jsonl", b"")
    (tmp_path / "notes.txt").write_bytes(b"")
    (tmp_path / "nested").mkdir()
    expanded = expand_url(memory_root + "/")
    local = [path.name for path in expand_session_paths([tmp_path])]
    assert [url.rsplit("/", 1)[-1] for url in expanded] == local
    assert local == [
        "B.jsonl",
        "a.jsonl.gz",
        "b.jsonl",
        "é.jsonl",
        "\U0001f600.jsonl",
        "\uff5e.jsonl",
    ]
    assert all(url.startswith(memory_root + "/") for url in expanded)


def test_glob_and_single_file(memory_root: str) -> None:
    for name in ("x-2.jsonl", "x-10.jsonl", "y-1.jsonl"):
        put(f"{memory_root}/{name}", b"")
    matched = [url.rsplit("/", 1)[-1] for url in expand_url(f"{memory_root}/x-*.jsonl")]
    assert matched == ["x-10.jsonl", "x-2.jsonl"]
    assert expand_url(f"{memory_root}/y-1.jsonl") == [f"{memory_root}/y-1.jsonl"]


def test_missing_urls_are_input_errors(memory_root: str) -> None:
    with pytest.raises(EntropyInputError, match="no such file or directory"):
        expand_url(f"{memory_root}/absent.jsonl")
    with pytest.raises(EntropyInputError, match="no file matches"):
        expand_url(f"{memory_root}/*.jsonl")
    with pytest.raises(EntropyInputError, match="cannot open the URL"):
        expand_url("no-such-protocol://x/y.jsonl")


def test_mixed_sources_keep_the_given_order(memory_root: str, demo_dir: Path) -> None:
    put(f"{memory_root}/one.jsonl", b"")
    local_dir = demo_dir / "sessions"
    sources = expand_session_sources([f"{memory_root}/one.jsonl", str(local_dir)])
    assert sources[0] == f"{memory_root}/one.jsonl"
    assert sources[1:] == [str(path) for path in expand_session_paths([local_dir])]


def test_memory_urls_match_local_files(memory_root: str, tmp_path: Path) -> None:
    """The awkward corpus (a large file first, empty, trace-less, malformed, gzipped, a
    truncated .gz) gives the same report and diagnostics from memory:// on every engine."""
    paths = write_mixed_corpus(tmp_path / "mixed")
    urls = []
    for path in paths:
        url = f"{memory_root}/{path.name}"
        put(url, path.read_bytes())
        urls.append(url)
    expected = fingerprint(paths)
    assert expected[1]["unreadableFiles"] == 1
    assert fingerprint(urls) == expected
    # The native format streams straight from storage; the report is the same.
    assert fingerprint(urls, options=NATIVE) == fingerprint(paths, options=NATIVE)
    assert fingerprint(urls, options=NATIVE)[0] == expected[0]
    # memory:// lives in this process only; worker processes read the same files as file://.
    file_urls = [path.as_uri() for path in paths]
    assert fingerprint(file_urls, engine="processes", jobs=2, batch=3) == expected
    with in_process_cluster(workers=2) as scheduler:
        assert fingerprint(urls, engine="dask", scheduler=scheduler) == expected
        assert fingerprint(urls, engine="dask", scheduler=scheduler, batch=4) == expected
        assert fingerprint(expand_url(memory_root), engine="dask", scheduler=scheduler) == (
            fingerprint(expand_session_paths([tmp_path / "mixed"]))
        )


def test_file_urls_match_paths(demo_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    directory = demo_dir / "sessions"
    assert main(["measure", "--sessions", str(directory), "--json"]) == 0
    local = json.loads(capsys.readouterr().out)
    assert main(["measure", "--sessions", directory.as_uri(), "--json"]) == 0
    remote = json.loads(capsys.readouterr().out)
    assert remote["reportHash"] == local["reportHash"]
    assert remote["report"] == local["report"]
    assert remote["diagnostics"]["lines"] == local["diagnostics"]["lines"] > 0


def test_unreadable_url_contributes_nothing(memory_root: str) -> None:
    put(f"{memory_root}/bad.jsonl.gz", b"\x1f\x8b not really gzip")
    state, diagnostics = meter_source(f"{memory_root}/bad.jsonl.gz")
    assert state is None
    assert diagnostics.files == diagnostics.unreadable_files == 1
    assert "unreadable" in diagnostics.samples[0]


@pytest.mark.parametrize("options", [NATIVE, ReadOptions()], ids=["fabric", "auto"])
def test_url_streams_without_reading_whole_file(memory_root: str, options: ReadOptions) -> None:
    """Reads come in bounded chunks, never one read of the whole object (straight into the
    scanner for the native format, into a local copy when the format is to be detected)."""
    text = session_text(5, 3_000_000, 0).encode()
    put(f"{memory_root}/big.jsonl", text)
    requested: list[int] = []
    memory_file = type(fsspec.open(f"{memory_root}/big.jsonl", "rb").open())
    original = memory_file.read

    def spy(self: Any, size: int = -1) -> bytes:
        requested.append(size)
        return bytes(original(self, size))

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(memory_file, "read", spy)
        state, _ = meter_source(f"{memory_root}/big.jsonl", options=options)
    assert state is not None and state.operations > 0
    assert requested and all(0 < size <= 1 << 20 for size in requested)


def _toy_reader(path: Path, options: ReadOptions, diagnostics: ScanDiagnostics) -> Iterable[bytes]:
    """A stand-in foreign format: native lines behind a one-line header."""
    with sessions.open_session(path) as stream:
        lines = stream.read().split(b"\n")
    return [line for line in lines[1:] if line]


def _toy_detector(path: Path, head: bytes) -> bool:
    return head.startswith(b"TOY\n") and path.suffix == ".jsonl"


def test_foreign_format_behind_a_url(memory_root: str, tmp_path: Path) -> None:
    """Readers that need a path get a worker-local copy; detection sees the same head."""
    data = b"TOY\n" + session_text(3, 60_000, 1).encode()
    local = tmp_path / "toy.jsonl"
    local.write_bytes(data)
    put(f"{memory_root}/toy.jsonl", data)
    # Added to (and removed from) the live registry, ahead of any registered detector.
    toy = SessionFormat("toy", _toy_reader, detector=_toy_detector)
    sessions.register_session_format(toy, detect_first=True)
    try:
        expected = fingerprint([local])
        assert fingerprint([f"{memory_root}/toy.jsonl"]) == expected
        named = ReadOptions(session_format="toy")
        assert fingerprint([f"{memory_root}/toy.jsonl"], options=named) == expected
    finally:
        sessions.unregister_session_format("toy")
    assert expected[1]["traces"] > 0
    # Read natively, the header line is ignored and the rest still counts: the same traces,
    # but one more line seen - so the toy reader really was the one used above.
    native = fingerprint([local], options=NATIVE)
    assert native[1]["lines"] == expected[1]["lines"] + 1


def test_urls_need_fsspec(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "fsspec", None)
    with pytest.raises(EntropyInputError, match=r"pytest-entropy\[dask\]"):
        expand_url("memory://anything/a.jsonl")


@pytest.mark.parametrize("session_format", ["fabric", "auto"])
def test_compile_and_trial_over_urls_match_local_paths(
    memory_root: str, tmp_path: Path, session_format: str
) -> None:
    """The two-pass compile stamps URLs by size and version; a URL corpus compiles and
    trials to the bytes of the same files on disk (streamed, or copied for ``auto``)."""
    from pytest_entropy.core.canonical import canonical_json
    from pytest_entropy.run.compile import compile_sources
    from pytest_entropy.run.corpus import source_files
    from pytest_entropy.run.trial import trial_sources
    from tests.distributed_support import SURFACE, write_corpus

    paths = write_corpus(tmp_path / "corpus", 0)
    for path in paths:
        put(f"{memory_root}/{path.name}", path.read_bytes())
    urls = expand_session_sources([memory_root])
    assert len(urls) == len(paths)
    options = ReadOptions(session_format=session_format)
    remote = compile_sources(source_files(urls), SURFACE, options=options)
    local = compile_sources(source_files(paths), SURFACE, options=options)
    assert remote.outcome.status == "compiled"
    assert canonical_json(remote.outcome.to_json()) == canonical_json(local.outcome.to_json())
    artifact = local.outcome.artifact
    remote_trial, _ = trial_sources(source_files(urls), SURFACE, artifact, options=options)
    local_trial, _ = trial_sources(source_files(paths), SURFACE, artifact, options=options)
    assert remote_trial.to_json() == local_trial.to_json()
