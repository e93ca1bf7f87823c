"""A real cluster and a real S3 API: the corpus commands give the local engine's bytes.

The scheduler, the two workers and the S3 server are separate processes on loopback ports
(``conftest.py``). The workers have no AWS settings of their own: everything they read on
S3 they read with the storage options that travel with the tasks.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from pytest_entropy.cli.app import main
from pytest_entropy.run import compile as compile_module
from pytest_entropy.run import corpus as corpus_module
from tests.cluster.conftest import BUCKET, Corpus
from tests.cluster_support import (
    ACCESS_KEY,
    REPO,
    SECRET_KEY,
    DaskCluster,
    S3Server,
    free_port,
    kill,
    moto_s3,
    service_environment,
)
from tests.dask_support import session_text

pytestmark = pytest.mark.cluster


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(list(args))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def command_outputs(
    corpus: Corpus,
    where: str,
    out_dir: Path,
    capsys: pytest.CaptureFixture[str],
    engine: list[str],
) -> dict[str, Any]:
    """measure, propose, compile (with its artifact), compile into a pool, pool and trial."""
    out_dir.mkdir()
    surface = str(corpus.surface)
    storage = ["--storage-options", json.dumps(corpus.storage_options)] if where == "s3" else []
    common = [*storage, *engine]
    artifact = out_dir / "artifact.json"
    results: dict[str, Any] = {}
    results["measure"] = run(
        capsys, "measure", "--sessions", corpus.sessions(where, "train"), "--json", *common
    )
    results["propose"] = run(
        capsys,
        "propose",
        "--sessions",
        corpus.sessions(where, "train"),
        "--surface",
        surface,
        *common,
    )
    results["compile"] = run(
        capsys,
        "compile",
        "--sessions",
        corpus.sessions(where, "train"),
        "--surface",
        surface,
        "--out",
        str(artifact),
        "--json",
        *common,
    )
    results["artifact"] = artifact.read_text()
    results["compile-rejected"] = run(
        capsys,
        "compile",
        "--sessions",
        corpus.sessions(where, "rejected"),
        "--surface",
        surface,
        "--out",
        str(out_dir / "unused.json"),
        "--json",
        *common,
    )
    results["compile-pool"] = run(
        capsys,
        "compile",
        "--sessions",
        corpus.sessions(where, "held-out"),
        "--surface",
        surface,
        "--pool",
        str(out_dir / "compile-pool.json"),
        "--json",
        *common,
    )
    results["compile-pool-file"] = (out_dir / "compile-pool.json").read_text()
    results["pool"] = run(
        capsys,
        "pool",
        "--sessions",
        corpus.sessions(where, "train"),
        "--out",
        str(out_dir / "pool.json"),
        *common,
    )
    results["pool-file"] = (out_dir / "pool.json").read_text()
    results["trial"] = run(
        capsys,
        "trial",
        "--sessions",
        corpus.sessions(where, "held-out"),
        "--surface",
        surface,
        "--artifact",
        str(artifact),
        "--json",
        *common,
    )
    # The same files are named by their path on disk and by their URL on S3 (pool windows,
    # diagnostics); this run's own output directory differs by design.
    text = json.dumps(results)
    text = text.replace(str(out_dir), "OUT").replace(str(corpus.disk), "SOURCES")
    text = text.replace(corpus.url, "SOURCES")
    return dict(json.loads(text))


def test_commands_over_s3_give_the_local_bytes_on_every_engine(
    corpus: Corpus,
    cluster: DaskCluster,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    local = command_outputs(corpus, "disk", tmp_path / "disk", capsys, [])
    assert local["compile"][0] == 0 and json.loads(local["compile"][1])["status"] == "compiled"
    assert local["compile-rejected"][0] == 1
    assert json.loads(local["trial"][1])["totals"]["operations"] > 0
    on_s3 = command_outputs(corpus, "s3", tmp_path / "s3-local", capsys, [])
    assert on_s3 == local
    clustered = command_outputs(
        corpus, "s3", tmp_path / "s3-cluster", capsys, ["--scheduler", cluster.address]
    )
    assert clustered == local
    # The credentials went to every reader and appear in no output, file or log.
    shown = json.dumps([on_s3, clustered]) + cluster.logs()
    assert ACCESS_KEY not in shown and SECRET_KEY not in shown
    assert "NoCredentialsError" not in cluster.logs()


def test_a_worker_killed_in_the_middle_of_a_run_changes_nothing(
    s3: S3Server,
    cluster: DaskCluster,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    # Decision (docs/decisions.md): Dask reruns a lost worker's tasks on the others and the
    # client prints the same bytes; only a task every worker died on stops the run.
    filesystem = s3.filesystem()
    prefix = f"{BUCKET}/many"
    for index in range(60):
        filesystem.pipe(f"{prefix}/{index:03d}.jsonl", session_text(index, 30_000, index).encode())
    sessions = f"s3://{prefix}/"
    storage = ["--storage-options", json.dumps(s3.storage_options())]
    expected = run(capsys, "measure", "--sessions", sessions, "--json", *storage)
    assert expected[0] == 0
    doomed = cluster.start_worker()  # the third worker, the one to lose
    merges = {"n": 0}
    original = corpus_module._merge_part

    def merge_then_kill(result: Any, measured: Any) -> Any:
        merges["n"] += 1
        if merges["n"] == 1:
            kill(doomed)  # while the cluster still holds most of the run's tasks
        return original(result, measured)

    monkeypatch.setattr(corpus_module, "_merge_part", merge_then_kill)
    started = time.monotonic()
    survived = run(
        capsys,
        "measure",
        "--sessions",
        sessions,
        "--json",
        "--scheduler",
        cluster.address,
        *storage,
    )
    assert doomed.returncode is not None  # it really died mid-run
    assert merges["n"] > 1
    assert survived == expected
    assert time.monotonic() - started < 60
    _wait_for_workers(cluster, 2)


def _wait_for_workers(cluster: DaskCluster, count: int) -> None:
    deadline = time.monotonic() + 30
    while cluster.worker_count() != count:
        assert time.monotonic() < deadline, "the scheduler still lists the killed worker"
        time.sleep(0.2)


@pytest.mark.parametrize("engine", ["local", "cluster"])
def test_an_object_that_changes_between_the_compile_passes_fails_it(
    s3: S3Server,
    cluster: DaskCluster,
    corpus: Corpus,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    engine: str,
) -> None:
    filesystem = s3.filesystem()
    prefix = f"{BUCKET}/changing-{engine}"
    for path in sorted((corpus.disk / "train").iterdir()):
        filesystem.put(str(path), f"{prefix}/{path.name}")
    target = f"{prefix}/01.jsonl"
    original_bytes = filesystem.cat(target)
    # Same size, one byte different: only the object's version (ETag) can tell.
    changed = original_bytes.replace(b'"disk"', b'"dusk"', 1)
    assert changed != original_bytes and len(changed) == len(original_bytes)
    original = compile_module.compile_from_evidence

    def change_between_passes(*args: Any, **kwargs: Any) -> Any:
        filesystem.pipe(target, changed)  # after pass 1 has read it, before pass 2
        return original(*args, **kwargs)

    monkeypatch.setattr(compile_module, "compile_from_evidence", change_between_passes)
    out = tmp_path / "artifact.json"
    scheduler = ["--scheduler", cluster.address] if engine == "cluster" else []
    status, _, stderr = run(
        capsys,
        "compile",
        "--sessions",
        f"s3://{prefix}/",
        "--surface",
        str(corpus.surface),
        "--out",
        str(out),
        "--storage-options",
        json.dumps(s3.storage_options()),
        *scheduler,
    )
    assert status == 2
    assert f"s3://{target}" in stderr and "changed" in stderr
    assert "Traceback" not in stderr
    assert not out.exists()
    assert not (tmp_path / ".entropy").exists()


def test_a_scheduler_that_does_not_answer_exits_2_within_the_timeout(
    corpus: Corpus, capsys: pytest.CaptureFixture[str]
) -> None:
    address = f"tcp://127.0.0.1:{free_port()}"  # nothing listens there
    started = time.monotonic()
    status, _, stderr = run(
        capsys,
        "measure",
        "--sessions",
        corpus.sessions("disk", "train"),
        "--scheduler",
        address,
        "--scheduler-timeout",
        "1",
    )
    elapsed = time.monotonic() - started
    assert status == 2
    assert address in stderr and "within 1 s" in stderr
    assert "Traceback" not in stderr
    assert elapsed < 8, elapsed


@pytest.mark.parametrize(
    "location", [f"s3://{BUCKET}-missing/corpus/", f"s3://{BUCKET}/no-such-prefix/"]
)
def test_a_bucket_or_prefix_that_does_not_exist_exits_2_naming_it(
    corpus: Corpus, capsys: pytest.CaptureFixture[str], location: str
) -> None:
    status, _, stderr = run(
        capsys,
        "measure",
        "--sessions",
        location,
        "--storage-options",
        json.dumps(corpus.storage_options),
    )
    assert status == 2
    assert location in stderr
    assert "Traceback" not in stderr


def test_denied_credentials_exit_2_naming_the_url(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], s3: S3Server
) -> None:
    # A second server that checks every key against its (empty) IAM: every key is refused.
    with moto_s3(tmp_path / "moto.log", authenticate=True) as guarded:
        url = f"s3://{BUCKET}/corpus/"
        status, stdout, stderr = run(
            capsys,
            "measure",
            "--sessions",
            url,
            "--storage-options",
            json.dumps(guarded.storage_options()),
        )
    assert status == 2
    assert url in stderr and "cannot list the URL" in stderr
    assert "Traceback" not in stderr
    assert ACCESS_KEY not in stdout + stderr and SECRET_KEY not in stdout + stderr


def test_a_secret_in_a_backend_message_is_masked(
    corpus: Corpus, capsys: pytest.CaptureFixture[str]
) -> None:
    # botocore repeats an unknown profile's name in its message.
    secret_profile = "entropy-profile-s3cr3t-Kq93"
    options = {**corpus.storage_options, "profile": secret_profile}
    url = corpus.sessions("s3", "train")
    status, stdout, stderr = run(
        capsys, "measure", "--sessions", url, "--storage-options", json.dumps(options)
    )
    assert status == 2
    assert url in stderr and "***" in stderr
    assert secret_profile not in stdout + stderr
    assert SECRET_KEY not in stdout + stderr


def test_credentials_from_the_environment(
    s3: S3Server, corpus: Corpus, cluster: DaskCluster, tmp_path: Path
) -> None:
    # The environment works for the client's own reads; the workers do not share the
    # client's environment, and the run says so instead of reporting a traceback.
    environment = {
        **service_environment(),
        "AWS_ACCESS_KEY_ID": ACCESS_KEY,
        "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
        "AWS_ENDPOINT_URL": s3.endpoint,
    }
    measure = [sys.executable, "-m", "pytest_entropy", "measure", "--json", "--sessions"]

    def cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*measure, *args], env=env, cwd=REPO, capture_output=True, text=True, timeout=120
        )

    disk = cli(corpus.sessions("disk", "train"), env=service_environment())
    from_environment = cli(corpus.sessions("s3", "train"), env=environment)
    assert from_environment.returncode == 0, from_environment.stderr
    assert (
        json.loads(from_environment.stdout)["reportHash"] == json.loads(disk.stdout)["reportHash"]
    )
    on_cluster = cli(
        corpus.sessions("s3", "train"), "--scheduler", cluster.address, env=environment
    )
    assert on_cluster.returncode == 2
    assert f"{corpus.url}/train/" in on_cluster.stderr
    assert "--storage-options" in on_cluster.stderr
    assert "Traceback" not in on_cluster.stderr


def test_a_stamp_asks_the_storage_not_the_listing_cache(s3: S3Server) -> None:
    from pytest_entropy.sources.urls import expand_url, url_stamp

    options = s3.storage_options()
    filesystem = s3.filesystem()
    filesystem.pipe(f"{BUCKET}/stamped/a.jsonl", b"one\n")
    url = f"s3://{BUCKET}/stamped/"
    assert expand_url(url, options) == [f"{url}a.jsonl"]  # the listing is cached now
    before = url_stamp(f"{url}a.jsonl", options)
    filesystem.pipe(f"{BUCKET}/stamped/a.jsonl", b"two\n")  # same size, new version
    after = url_stamp(f"{url}a.jsonl", options)
    assert before is not None and after is not None
    assert before[0] == after[0] == 4
    assert before != after
