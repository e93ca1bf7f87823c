"""The Rust crate's differential vectors (native/tests/data) are what the plain Python gives.

``cargo test`` compares the crate with those files; this keeps the files honest from the
Python side, so a change to the specification (ingest/jsonparse.py, ingest/lines.py,
core/jscompat.py, core/canonical.py) that moves a vector shows up in the Python suite too.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "native" / "tests" / "make_vectors.py"


def test_native_vectors_match_the_plain_python() -> None:
    env = {**os.environ, "PYTEST_ENTROPY_PURE": "1", "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--check"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_check_notices_a_stale_vector(tmp_path: Path) -> None:
    # The same script on a copy whose data lost a case must fail: the check is not vacuous.
    copy = tmp_path / "tests"
    (copy / "data").mkdir(parents=True)
    for name in ("make_vectors.py", "describe.py"):
        (copy / name).write_bytes((SCRIPT.parent / name).read_bytes())
    for name in ("json.json", "jsnum.json"):
        (copy / "data" / name).write_bytes((SCRIPT.parent / "data" / name).read_bytes())
    lines = (SCRIPT.parent / "data" / "lines.json").read_text(encoding="ascii")
    (copy / "data" / "lines.json").write_text(lines.replace('"empty"', '"ignored"', 1))
    env = {**os.environ, "PYTEST_ENTROPY_PURE": "1", "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, str(copy / "make_vectors.py"), "--check"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 1
    assert "lines.json" in done.stderr
