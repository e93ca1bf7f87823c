"""Whatever ``import``, ``compile --write`` or ``pool`` writes, the store's loader accepts
(issue 12, item 4): a document the loader would reject is refused before it is written.

Inputs carry the numbers and strings that JSON round trips get wrong: overflowing doubles
(``1e400`` parses as infinity and would be written as ``null``), underflows, huge integers,
negative zero, lone surrogates, control characters and padded strings.
"""

from __future__ import annotations

import contextlib
import io
import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_entropy.cli.app import main
from pytest_entropy.core.canonical import schema_digest
from pytest_entropy.state.store import COMPILED, POOL, load, load_path

DEMO = Path(__file__).resolve().parents[2] / "corpora" / "demo"
SURFACE = DEMO / "surface.json"
SESSION_LINE = next(
    line
    for line in (DEMO / "sessions" / "2026-01-05-notes-release.jsonl")
    .read_text("utf-8")
    .splitlines()
    if '"title":"Weekly"' in line
)

number_literals = st.one_of(
    st.sampled_from(["1e400", "-1e400", "1e-400", "-0", "-0.0", "0.1", "9007199254740993"]),
    st.integers(min_value=-(10**30), max_value=10**30).map(str),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
)
string_literals = st.one_of(
    st.sampled_from(['"\\ud800"', '"\\udfff x"', '"  padded  "', '"\\u0000"', '""', '" "']),
    st.text(max_size=20).map(json.dumps),
)
literals = st.one_of(
    number_literals, string_literals, st.sampled_from(["true", "null", "[]", "{}"])
)


def quiet_main(argv: list[str]) -> int:
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        return main(argv)


def peer_text(before: str, after: str, ref_padding: str, digest_extra: str) -> str:
    schemas = {
        action["ref"]: action["inputSchema"]
        for action in json.loads(SURFACE.read_text(encoding="utf-8"))["actions"]
    }
    digest = schema_digest(schemas["pi.edit"]) + digest_extra
    artifact: dict[str, Any] = {
        "version": 1,
        "metricVersion": 2,
        "actions": [],
        "quarantined": [{"ref": f"{ref_padding}pi.edit{ref_padding}", "baseSchemaDigest": digest}],
        "applied": [{"kind": "quarantine", "ref": "pi.edit", "detail": "peer"}],
        "gate": {"passed": True, "beforeScore": "BEFORE", "afterScore": "AFTER", "reasons": []},
        "evidenceDigest": "peer",
    }
    text = json.dumps(artifact)
    return text.replace('"BEFORE"', before).replace('"AFTER"', after)


# Each example runs whole commands in-process; a few dozen cover the literal kinds.
@settings(max_examples=30)
@given(
    before=number_literals,
    after=number_literals,
    ref_padding=st.sampled_from(["", " ", "\t"]),
    digest_extra=st.sampled_from(["", " "]),
    existing=st.booleans(),
)
def test_whatever_import_writes_loads(
    before: str, after: str, ref_padding: str, digest_extra: str, existing: bool
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        state = Path(tmp) / ".entropy"
        if existing:  # a local artifact whose gate the merge keeps
            first = Path(tmp) / "first.json"
            first.write_text(peer_text("0.5", "0.25", "", ""), encoding="utf-8")
            assert quiet_main(["import", str(first), "--surface", str(SURFACE),
                               "--state-dir", str(state)]) == 0  # fmt: skip
        peer = Path(tmp) / "peer.json"
        peer.write_text(peer_text(before, after, ref_padding, digest_extra), encoding="utf-8")
        code = quiet_main(
            ["import", str(peer), "--surface", str(SURFACE), "--state-dir", str(state)]
        )
        assert code in (0, 2)
        assert load(state, COMPILED).error is None
        if code == 0:
            assert load(state, COMPILED).file is not None


@settings(max_examples=15)
@given(values=st.lists(literals, min_size=1, max_size=4))
def test_whatever_compile_and_pool_write_loads(values: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        sessions = Path(tmp) / "sessions"
        sessions.mkdir()
        lines = [
            SESSION_LINE.replace('"title":"Weekly"', f'"title":{value}').replace(
                '"format":"html"', f'"format":{value}'
            )
            for value in values
        ]
        (sessions / "hostile.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
        state = Path(tmp) / ".entropy"
        code = quiet_main(["compile", "--sessions", str(sessions), "--surface", str(SURFACE),
                           "--state-dir", str(state), "--write"])  # fmt: skip
        assert code in (0, 1, 2)
        assert load(state, COMPILED).error is None
        assert load(state, POOL).error is None
        out = Path(tmp) / "pool.json"
        code = quiet_main(["pool", "--sessions", str(sessions), "--out", str(out)])
        assert code in (0, 2)
        assert load_path(out, POOL).error is None
        if code == 0:  # and merging the pool into itself again keeps it loadable
            code = quiet_main(
                ["pool", "--sessions", str(sessions), "--pool-in", str(out), "--out", str(out)]
            )
            assert code in (0, 2) and load_path(out, POOL).error is None
