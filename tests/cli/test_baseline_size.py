"""Issue 29 point 4: a corpus-score baseline compares like with like.

The v2 corpus score divides by successful calls, so a corpus copied 100 times scores far
lower with the same behaviour; a baseline comparison across such a size change is refused
with the explanation (exit 1 under CI, a warning locally), while the per-session view
(``status``) of the same data does not move.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pytest_entropy.cli.app import main
from pytest_entropy.core.meter import measure
from pytest_entropy.testing.ratchet import check_baseline

DEMO = Path(__file__).resolve().parents[2] / "corpora" / "demo"
SESSIONS = DEMO / "sessions"


def _copied(tmp_path: Path, times: int) -> Path:
    target = tmp_path / f"x{times}"
    target.mkdir()
    for copy in range(times):
        for source in sorted(SESSIONS.iterdir()):
            shutil.copy(source, target / f"{copy:03d}-{source.name}")
    return target


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_a_hundredfold_corpus_is_refused_against_the_originals_baseline(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CI", raising=False)
    baseline = str(tmp_path / "entropy-baseline.json")
    code, _, _ = _run(capsys, "measure", "--sessions", str(SESSIONS), "--baseline", baseline)
    assert code == 0
    entry = json.loads(Path(baseline).read_text())["entries"]["corpus"]
    assert entry["corpusSize"] == {"actionOperations": 31, "traces": 7}
    big = _copied(tmp_path, 100)
    # Without the refusal this gate would pass: the score fell only because the corpus grew.
    code, out, _ = _run(capsys, "measure", "--sessions", str(big), "--baseline", baseline)
    assert code == 0
    assert "warning: not comparing the corpus score with the baseline" in out
    assert "per-session window and slope" in out and "invocationRejectionsPer1k" in out
    assert "(100x, more than the size factor 2)" in out
    monkeypatch.setenv("CI", "1")
    code, out, _ = _run(capsys, "measure", "--sessions", str(big), "--baseline", baseline)
    assert code == 1
    assert "not comparing the corpus score" in out and "warning" not in out
    # A wider factor, asked for, compares again (and passes: the score fell).
    code, out, _ = _run(
        capsys, "measure", "--sessions", str(big), "--baseline", baseline, "--size-factor", "200"
    )
    assert code == 0
    assert "not comparing" not in out
    # The same corpus again is compared as before.
    code, out, _ = _run(capsys, "measure", "--sessions", str(SESSIONS), "--baseline", baseline)
    assert code == 0
    assert "entropy ratchet holds" in out


def test_the_per_session_view_does_not_move(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    def sessions(directory: Path) -> list[float]:
        code, out, _ = _run(capsys, "status", "--sessions", str(directory), "--json")
        assert code == 0
        return sorted(item["report"]["score"] for item in json.loads(out)["corpus"]["sessions"])

    original = sessions(SESSIONS)
    copied = sessions(_copied(tmp_path, 100))
    # Each session of the copy scores as its original does, and the window does not grow
    # with the corpus: the size-invariant view the refusal points to.
    assert set(copied) <= set(original)
    assert len(copied) < 300


def test_entries_written_before_sizes_are_still_compared(tmp_path: Path) -> None:
    report = measure([{"operations": [{"ref": "pi.read", "args": {}, "outcome": "succeeded"}]}])
    path = tmp_path / "b.json"
    assert check_baseline(path, "c", report).status == "created"
    entries = json.loads(path.read_text())
    entries["entries"]["c"].pop("corpusSize")
    path.write_text(json.dumps(entries))
    big = measure([{"operations": [{"ref": "pi.read", "args": {}, "outcome": "succeeded"}] * 50}])
    assert check_baseline(path, "c", big, ci=True).status == "unchanged"
