"""Session-wide services for the cluster tests: one moto S3 server, one Dask cluster of a
scheduler and two workers (separate processes on loopback), and a corpus on both disk and S3.

Every service is stopped when the session ends, whatever happened; waits are bounded. With
``CI`` set a missing extra (dask, moto, s3fs) fails these tests instead of skipping them.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.cluster_support import DaskCluster, S3Server, dask_cluster, moto_s3
from tests.distributed_support import SURFACE, write_corpus

BUCKET = "entropy-tests"
CORPORA = {"train": 0, "held-out": 4, "rejected": 1}  # seeds: compiles, held out, rejected


def require(module: str) -> None:
    """The module, or a skip outside CI (in CI the extras are installed: a failure)."""
    if os.environ.get("CI"):
        __import__(module)
    else:
        pytest.importorskip(module, reason='needs pip install -e ".[test,dask]"')


@pytest.fixture(scope="session")
def s3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Server]:
    for module in ("distributed", "moto.server", "s3fs"):
        require(module)
    with moto_s3(tmp_path_factory.mktemp("moto") / "moto.log") as server:
        server.filesystem().mkdir(BUCKET)
        yield server


@pytest.fixture(scope="session")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DaskCluster]:
    require("distributed")
    with dask_cluster(tmp_path_factory.mktemp("dask"), workers=2) as running:
        yield running


@dataclass(frozen=True)
class Corpus:
    """The same session files on disk (``disk``) and on S3 (``url``), and the surface."""

    disk: Path
    url: str
    surface: Path
    storage_options: dict[str, Any]

    def sessions(self, where: str, name: str) -> str:
        return f"{self.url}/{name}/" if where == "s3" else str(self.disk / name)


@pytest.fixture(scope="session")
def corpus(s3: S3Server, tmp_path_factory: pytest.TempPathFactory) -> Corpus:
    root = tmp_path_factory.mktemp("cluster-corpus")
    filesystem = s3.filesystem()
    for name, seed in CORPORA.items():
        for path in write_corpus(root / name, seed):
            filesystem.put(str(path), f"{BUCKET}/corpus/{name}/{path.name}")
    surface = root / "surface.json"
    surface.write_text(json.dumps(SURFACE))
    return Corpus(root, f"s3://{BUCKET}/corpus", surface, s3.storage_options())
