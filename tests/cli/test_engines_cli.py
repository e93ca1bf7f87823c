"""``compile``, ``propose``, ``trial`` and ``pool`` print the same bytes on every engine."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_entropy.cli.app import main

from ..dask_support import in_process_cluster
from ..distributed_support import SURFACE, write_corpus

ENGINE_ARGS = [
    pytest.param([], id="local"),
    pytest.param(["--jobs", "2"], id="processes"),
]


@pytest.fixture(scope="module")
def scheduler() -> Iterator[str]:
    with in_process_cluster(2) as address:
        yield address


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("engines-cli")
    write_corpus(root / "train", 0)  # tightens and compiles
    write_corpus(root / "held-out", 4)
    write_corpus(root / "rejected", 1)  # the quarantine is rejected
    (root / "surface.json").write_text(json.dumps(SURFACE))
    return root


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    status = main(list(args))
    return status, capsys.readouterr().out


def outputs(
    workspace: Path, capsys: pytest.CaptureFixture[str], engine: list[str], tag: str
) -> dict[str, tuple[int, str]]:
    surface = str(workspace / "surface.json")
    artifact = workspace / f"artifact-{tag}.json"
    pool = workspace / f"pool-{tag}.json"
    results = {}
    for name, corpus in (("train", "train"), ("rejected", "rejected")):
        results[f"compile-{name}"] = run(
            capsys,
            "compile",
            "--sessions",
            str(workspace / corpus),
            "--surface",
            surface,
            "--out",
            str(artifact) if name == "train" else str(workspace / f"unused-{tag}.json"),
            "--json",
            *engine,
        )
    results["artifact"] = (0, artifact.read_text())
    results["compile-pool"] = run(
        capsys,
        "compile",
        "--sessions",
        str(workspace / "held-out"),
        "--surface",
        surface,
        "--pool",
        str(pool),
        "--json",
        *engine,
    )
    results["pool-file"] = (0, pool.read_text())
    results["trial"] = run(
        capsys,
        "trial",
        "--sessions",
        str(workspace / "held-out"),
        "--surface",
        surface,
        "--artifact",
        str(artifact),
        "--json",
        *engine,
    )
    results["propose"] = run(
        capsys, "propose", "--sessions", str(workspace / "train"), "--surface", surface, *engine
    )
    results["pool"] = run(
        capsys,
        "pool",
        "--sessions",
        str(workspace / "train"),
        "--out",
        str(workspace / f"pool-cmd-{tag}.json"),
        *engine,
    )
    results["pool-cmd-file"] = (0, (workspace / f"pool-cmd-{tag}.json").read_text())
    return results


def normalise(results: dict[str, tuple[int, str]], tag: str) -> dict[str, tuple[int, str]]:
    """The outputs with this run's own file names taken out (they differ by design)."""
    return {key: (status, text.replace(f"-{tag}", "-X")) for key, (status, text) in results.items()}


@pytest.mark.parametrize("engine", ENGINE_ARGS)
def test_commands_match_the_local_engine(
    workspace: Path,
    capsys: pytest.CaptureFixture[str],
    engine: list[str],
    request: pytest.FixtureRequest,
) -> None:
    tag = request.node.callspec.id
    local = normalise(outputs(workspace, capsys, [], f"{tag}-base"), f"{tag}-base")
    other = normalise(outputs(workspace, capsys, engine, tag), tag)
    assert other == local
    assert json.loads(local["compile-train"][1])["status"] == "compiled"
    assert json.loads(local["compile-rejected"][1])["status"] == "rejected"
    assert local["compile-rejected"][0] == 1
    assert json.loads(local["trial"][1])["totals"]["operations"] > 0


def test_commands_on_a_dask_scheduler(
    workspace: Path, capsys: pytest.CaptureFixture[str], scheduler: str
) -> None:
    local = normalise(outputs(workspace, capsys, [], "dask-base"), "dask-base")
    clustered = normalise(outputs(workspace, capsys, ["--scheduler", scheduler], "dask"), "dask")
    assert clustered == local


def test_scheduler_needs_the_dask_engine(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status = main(
        [
            "propose",
            "--sessions",
            str(workspace / "held-out"),
            "--surface",
            str(workspace / "surface.json"),
            "--engine",
            "local",
            "--scheduler",
            "tcp://127.0.0.1:1",
        ]
    )
    assert status == 2
    assert "--scheduler needs --engine dask" in capsys.readouterr().err
