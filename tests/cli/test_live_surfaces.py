"""Issue 26, items 7-11: every --surface reads live servers the same way, ``export`` keeps what
``lint`` needs while every hash reads only ``ref`` and ``inputSchema``, ``module:attribute``
imports from the working directory, ``--out`` after ``--`` is refused, and MCP timeouts are
configurable and say what they waited for."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

from pytest_entropy import load_surface
from pytest_entropy.cli.app import main
from pytest_entropy.core.canonical import stable_json_hash
from pytest_entropy.core.errors import EntropyInputError

REPO = Path(__file__).resolve().parents[2]
ECHO = "tests.servers.echo_server:server"
SLOW = "tests.servers.slow_server:server"
COMMAND = (sys.executable, "-m", "tests.servers.echo_server")


def _json(capsys: pytest.CaptureFixture[str]) -> Any:
    return json.loads(capsys.readouterr().out)


def _rules(findings: Any) -> set[str]:
    rows = findings["findings"] if isinstance(findings, dict) else findings
    return {row["rule"] for row in rows}


# ------------------------------------------------------------------ 7: lint takes servers


def test_lint_reads_a_module_attribute_server(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["lint", "--surface", ECHO, "--json"])
    out = capsys.readouterr()
    assert code in (0, 1), out.err
    assert "not found" not in out.err
    findings = json.loads(out.out)
    # The server describes both tools: the descriptions reached the rules.
    assert "tool-undescribed" not in _rules(findings)


def test_lint_sarif_names_a_server_by_its_spelling(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["lint", "--surface", ECHO, "--output-format", "sarif"]) in (0, 1)
    sarif = _json(capsys)
    for result in sarif["runs"][0]["results"]:
        location = result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        assert location == ECHO


def test_surface_lint_in_certification_takes_a_server() -> None:
    from pytest_entropy.run.lint import lint_source

    run = lint_source(ECHO, ["mcp"])
    assert [action["ref"] for action in run.surface["actions"]] == ["search", "render"]
    assert all(action["description"] for action in run.surface["actions"])


@pytest.mark.server
def test_lint_reads_a_stdio_server(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(REPO)  # the child finds tests.servers from its working directory
    spec = "mcp+stdio:" + " ".join(COMMAND)
    code = main(["lint", "--surface", spec, "--mcp-timeout", "60", "--json"])
    out = capsys.readouterr()
    assert code in (0, 1), out.err
    assert "tool-undescribed" not in _rules(json.loads(out.out))


# --------------------------------------------- 8: export keeps tool fields, hashes do not


def _export(argv: list[str], out: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    assert main(["export", "--out", str(out), "--json", *argv]) == 0, capsys.readouterr().err
    printed: dict[str, Any] = _json(capsys)
    return printed


def _reference(snapshot: dict[str, Any]) -> dict[str, Any]:
    """The snapshot as the reference's export writes it: ref and inputSchema only."""
    actions = [{"ref": a["ref"], "inputSchema": a["inputSchema"]} for a in snapshot["actions"]]
    return {"version": 1, "actions": actions}


def test_export_keeps_descriptions_and_lint_reads_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "surface.json"
    printed = _export(["--surface", ECHO], out, capsys)
    exported = json.loads(out.read_text(encoding="utf-8"))
    by_ref = {action["ref"]: action for action in exported["actions"]}
    assert by_ref["search"]["description"] == "Search the notes."
    assert by_ref["render"]["description"] == "Render a document."
    assert "outputSchema" in by_ref["render"]  # what the SDK derived from `-> str`
    # The digest is the reference's export's (ref and inputSchema only).
    assert printed["digest"] == stable_json_hash(_reference(exported))
    # Round trip: lint of the export finds what lint of the server finds.
    assert main(["lint", "--surface", str(out), "--json"]) in (0, 1)
    from_file = _json(capsys)
    assert "tool-undescribed" not in _rules(from_file)
    assert main(["lint", "--surface", ECHO, "--json"]) in (0, 1)
    assert _rules(_json(capsys)) == _rules(from_file)


@pytest.mark.server
def test_a_live_export_lints_without_undescribed_tools(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "live.json"
    argv = ["--mcp-timeout", "60", "--mcp-env", f"PYTHONPATH={REPO}", "--mcp", "--", *COMMAND]
    _export(argv, out, capsys)
    assert main(["lint", "--surface", str(out), "--json"]) in (0, 1)
    assert "tool-undescribed" not in _rules(_json(capsys))


def test_every_hash_reads_only_ref_and_input_schema(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plain = json.loads((REPO / "corpora" / "demo" / "surface.json").read_text(encoding="utf-8"))
    rich = {
        "version": 1,
        "actions": [
            {
                **action,
                "title": action["ref"].upper(),
                "description": f"The {action['ref']} tool.",
                "annotations": {"readOnlyHint": True},
                "outputSchema": {"type": "object"},
            }
            for action in plain["actions"]
        ],
    }
    plain_path, rich_path = tmp_path / "plain.json", tmp_path / "rich.json"
    plain_path.write_text(json.dumps(plain), encoding="utf-8")
    rich_path.write_text(json.dumps(rich), encoding="utf-8")
    # The loaders (every format spelling) give the reference's snapshot.
    for surface_format in ("auto", "snapshot"):
        assert load_surface(rich_path, surface_format=surface_format) == load_surface(plain_path)
    assert load_surface(rich) == load_surface(plain)
    session = REPO / "corpora" / "demo" / "sessions"  # compile tightens one, hides one

    def measured(surface: Path) -> Any:
        argv = ["measure", "--sessions", str(session), "--surface", str(surface), "--json"]
        assert main(argv) == 0, capsys.readouterr().err
        return _json(capsys)

    plain_report, rich_report = measured(plain_path), measured(rich_path)
    assert rich_report == plain_report
    assert rich_report["report"]["catalogDigest"] == stable_json_hash(plain)
    # The freedom fingerprint and the ratchet's tracked values read the same.
    assert main(["freedom", "--surface", str(rich_path), "--json"]) == 0
    rich_freedom = _json(capsys)
    assert main(["freedom", "--surface", str(plain_path), "--json"]) == 0
    assert _json(capsys) == rich_freedom
    # The compile's artifact (its base digests) and the state files are byte for byte.
    written = {}
    for name, surface in (("plain", plain_path), ("rich", rich_path)):
        state = tmp_path / f"state-{name}"
        argv = ["compile", "--sessions", str(session), "--surface", str(surface)]
        assert main([*argv, "--state-dir", str(state), "--write"]) in (0, 1)
        capsys.readouterr()
        written[name] = {path.name: path.read_bytes() for path in sorted(state.iterdir())}
    assert "compiled.json" in written["plain"]
    assert written["rich"] == written["plain"]
    # `status` over the compiled state: the same surface digest and corpus.
    shown = {}
    for name, surface in (("plain", plain_path), ("rich", rich_path)):
        argv = ["status", "--sessions", str(session), "--surface", str(surface)]
        assert main([*argv, "--state-dir", str(tmp_path / f"state-{name}"), "--json"]) == 0
        document = _json(capsys)
        shown[name] = (document["surface"], document["corpus"])
    assert shown["rich"] == shown["plain"]


# ------------------------------------------------------------ 9: the working directory


def test_module_attribute_imports_from_the_working_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    module = "entropy_cwd_tools_server"
    (tmp_path / f"{module}.py").write_text(
        textwrap.dedent(
            '''
            from mcp.server.mcpserver import MCPServer

            server = MCPServer("cwd")


            @server.tool()
            def lookup(key: str) -> str:
                """Look a key up."""
                return key
            '''
        ),
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    # As under the console script: neither the working directory nor "" on sys.path.
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    monkeypatch.delitem(sys.modules, module, raising=False)
    before = list(sys.path)
    try:
        code = main(["freedom", "--surface", f"{module}:server", "--json"])
        assert code == 0, capsys.readouterr().err
        assert [row["ref"] for row in _json(capsys)["actions"]] == ["lookup"]
        assert sys.path == before  # the entry was only there for the import
    finally:
        sys.modules.pop(module, None)


def test_a_missing_module_says_where_it_looked() -> None:
    with pytest.raises(EntropyInputError, match="working directory"):
        load_surface("entropy_no_such_module_anywhere:server")


# ----------------------------------------------------- 10: --out after `--` is refused


@pytest.mark.server
def test_out_after_the_double_dash_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    target = tmp_path / "wanted.json"
    env = ["--mcp-env", f"PYTHONPATH={REPO}", "--mcp-timeout", "60"]
    code = main(["export", *env, "--mcp", "--", *COMMAND, "--out", str(target)])
    err = capsys.readouterr().err
    assert code == 2
    assert "--out" in err and "before `--`" in err
    assert not target.exists()
    assert not (tmp_path / ".entropy").exists()  # nothing at the default path either
    # The `=` spelling too, and --state-dir likewise.
    assert main(["export", *env, "--mcp", "--", *COMMAND, f"--out={target}"]) == 2
    assert main(["export", *env, "--mcp", "--", *COMMAND, "--state-dir", "s"]) == 2
    capsys.readouterr()
    # With export's own --out before `--`, the words after it are the server's.
    argv = ["export", "--out", str(target), *env, "--mcp", "--", *COMMAND, "--out", "x"]
    assert main(argv) == 0, capsys.readouterr().err
    assert [a["ref"] for a in json.loads(target.read_text(encoding="utf-8"))["actions"]] == [
        "render",
        "search",
    ]


# ------------------------------------------------------------------------ 11: timeouts


def test_a_timeout_names_the_step_and_the_wait() -> None:
    with pytest.raises(EntropyInputError) as caught:
        load_surface(SLOW, timeout=0.5)
    message = str(caught.value)
    assert "tools/list" in message and "0.5 s" in message
    assert "TimeoutError: " not in message
    assert SLOW in message


def test_the_ratchet_check_takes_a_timeout(tmp_path: Path) -> None:
    from pytest_entropy.testing.assertions import EntropyRatchet
    from tests.servers.slow_server import server

    ratchet = EntropyRatchet(tmp_path / "baseline.json", default_name="t")
    with pytest.raises(EntropyInputError, match=r"tools/list after waiting 0\.5 s"):
        ratchet.check(server, timeout=0.5)
    # The fixture's default comes from --entropy-mcp-timeout.
    configured = EntropyRatchet(tmp_path / "baseline.json", default_name="t", timeout=0.5)
    with pytest.raises(EntropyInputError, match=r"0\.5 s"):
        configured.check(server)


def test_every_surface_command_takes_mcp_timeout(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (
        ["freedom", "--surface", SLOW],
        ["lint", "--surface", SLOW],
        ["diff", SLOW, ECHO],
        ["export", "--surface", SLOW, "--out", "/dev/null"],
    ):
        assert main([*argv, "--mcp-timeout", "0.5"]) == 2, argv
        err = capsys.readouterr().err
        assert "tools/list" in err and "0.5 s" in err, (argv, err)


def test_the_timeout_is_a_configuration_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.entropy]\nmcp-timeout = 0.5\n", "utf-8")
    monkeypatch.chdir(tmp_path)
    assert main(["freedom", "--surface", SLOW]) == 2
    assert "0.5 s" in capsys.readouterr().err


@pytest.mark.server
def test_a_stdio_timeout_names_initialize(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [
        "export",
        "--out",
        str(tmp_path / "s.json"),
        "--mcp-timeout",
        "2",
        "--mcp-env",
        f"PYTHONPATH={REPO}",
        "--mcp-env",
        "ECHO_SERVER_MODE=hang",
        "--mcp",
        "--",
        *COMMAND,
    ]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "initialize" in err and "2 s" in err and "mcp+stdio:" in err
