"""``certify --storage-options`` (and ``storage-options`` of the configuration): corpus mode
over an fsspec URL reads with the storage options, and they never appear in the output."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_entropy.cli.app import main

fsspec = pytest.importorskip("fsspec", reason='needs pip install -e ".[dask]"')
from fsspec.implementations.memory import MemoryFileSystem  # noqa: E402

DEMO = Path(__file__).resolve().parents[2] / "corpora" / "demo"
SURFACE = str(DEMO / "surface.json")
TOKEN = "entropy-certify-token-Q8zR4"
WRONG = "entropy-wrong-token-L2mK9"


class LockedMemory(MemoryFileSystem):  # type: ignore[misc]
    """fsspec's in-memory store behind a token: without the right ``token`` storage option
    nothing can be listed or read (the way a bucket refuses a missing credential)."""

    protocol = "lockedmem"

    def __init__(self, *args: Any, **storage_options: Any) -> None:
        given = storage_options.get("token")
        if given != TOKEN:
            raise PermissionError(f"access denied for token {given!r}")
        super().__init__(*args, **storage_options)

    @classmethod
    def _strip_protocol(cls, path: Any) -> Any:
        if isinstance(path, str):
            path = path.removeprefix("lockedmem://")
        return super()._strip_protocol(path)


@pytest.fixture
def corpus() -> Iterator[str]:
    """The demo sessions on fsspec's in-memory filesystem; yields the directory's path."""
    fsspec.register_implementation("lockedmem", LockedMemory, clobber=True)
    root = f"/entropy-certify-{uuid.uuid4().hex}"
    memory = fsspec.filesystem("memory")
    for path in sorted((DEMO / "sessions").iterdir()):
        memory.pipe_file(f"{root}/{path.name}", path.read_bytes())
    yield root
    memory.rm(root, recursive=True)


def certify(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, Any, str]:
    code = main(["certify", *argv, "--surface", SURFACE, "--output-format", "json"])
    captured = capsys.readouterr()
    for secret in (TOKEN, WRONG):
        assert secret not in captured.out + captured.err
    return code, json.loads(captured.out), captured.err


def _corpus_check(report: dict[str, Any]) -> dict[str, Any]:
    check: dict[str, Any] = next(
        c for c in report["evaluation"]["checks"] if c["id"] == "corpus-mode"
    )
    return check


def test_a_memory_url_corpus_certifies_as_the_local_one(
    capsys: pytest.CaptureFixture[str], corpus: str
) -> None:
    code, local, _ = certify(capsys, "--sessions", str(DEMO / "sessions"))
    assert code == 0
    options = json.dumps({"skip_instance_cache": True})
    code, remote, err = certify(
        capsys, "--sessions", f"memory://{corpus}/", "--storage-options", options
    )
    assert code == 0, err
    assert remote["corpus"] == local["corpus"]
    assert _corpus_check(remote)["passed"]


def test_the_storage_options_reach_the_reads_and_are_never_shown(
    capsys: pytest.CaptureFixture[str],
    corpus: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    url = f"lockedmem://{corpus}/"
    code, local, _ = certify(capsys, "--sessions", str(DEMO / "sessions"))
    # Without the token the storage refuses: corpus mode fails (exit 1), naming the URL.
    code, refused, _ = certify(capsys, "--sessions", url)
    assert code == 1
    evidence = _corpus_check(refused)["evidence"]
    assert url in evidence and "access denied" in evidence
    # A wrong token is refused, and it is masked in the message like a right one.
    wrong = json.dumps({"token": WRONG})
    code, refused, _ = certify(capsys, "--sessions", url, "--storage-options", wrong)
    assert code == 1 and "***" in _corpus_check(refused)["evidence"]
    given = json.dumps({"token": TOKEN})
    code, report, err = certify(capsys, "--sessions", url, "--storage-options", given)
    assert code == 0, err
    assert report["corpus"] == local["corpus"]
    # The configuration twin.
    (tmp_path / "pyproject.toml").write_text(
        f'[tool.entropy]\nstorage-options = {{ token = "{TOKEN}" }}\n', encoding="utf-8"
    )
    code, configured, err = certify(capsys, "--sessions", url)
    assert code == 0, err
    assert configured["corpus"] == local["corpus"]
    # The human output and --report never show it either.
    code = main(["certify", "--sessions", url, "--surface", SURFACE, "--report", "r.json"])
    captured = capsys.readouterr()
    assert code == 0
    assert TOKEN not in captured.out + captured.err
    assert TOKEN not in (tmp_path / "r.json").read_text(encoding="utf-8")
