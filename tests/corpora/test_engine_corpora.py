"""Every engine gives the local report on the real third-party corpora (``../shared/corpora``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_entropy.core.jscompat import code_unit_key
from pytest_entropy.core.meter import report_hash
from pytest_entropy.engine import MeterResult, meter_paths
from tests.dask_support import in_process_cluster

pytestmark = [pytest.mark.corpora, pytest.mark.slow]

SESSION_SUFFIXES = (".jsonl", ".jsonl.gz", ".json")


@pytest.fixture(scope="module")
def scheduler() -> Iterator[str]:
    with in_process_cluster(workers=2) as address:
        yield address


def corpus_files(root: Path) -> list[Path]:
    """Every session-like file of the shared corpora, in code-unit order of its path."""
    files = [
        path for path in root.rglob("*") if path.is_file() and path.name.endswith(SESSION_SUFFIXES)
    ]
    return sorted(files, key=lambda path: code_unit_key(str(path)))


def fingerprint(result: MeterResult) -> tuple[str, dict[str, Any]]:
    return report_hash(result.state.finalize()), result.diagnostics.to_json()


def test_real_corpora_same_hash_on_the_cluster(shared_corpora: Path, scheduler: str) -> None:
    """About 800 files in a dozen formats (read by the foreign readers where registered),
    mapped in batches on the cluster's workers and merged in file order."""
    files = corpus_files(shared_corpora)
    assert len(files) > 100
    local = meter_paths(files)
    assert local.diagnostics.files == len(files)
    assert local.diagnostics.lines > 10_000
    clustered = meter_paths(files, engine="dask", scheduler=scheduler)
    assert fingerprint(clustered) == fingerprint(local)
