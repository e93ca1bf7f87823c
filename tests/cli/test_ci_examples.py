"""The CI files users copy, run here: the GitHub Actions example's ``run:`` steps on the demo
corpus (the base branch's surface faked by a copy), the GitLab job's script, and the
pre-commit hooks."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.ci_support import StepResult, load_job, run_steps

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "corpora" / "demo"
WORKFLOW = REPO / "examples" / "github-actions" / "entropy.yml"
GITLAB = REPO / "examples" / "gitlab-ci" / "entropy.gitlab-ci.yml"
HOOKS = REPO / ".pre-commit-hooks.yaml"
INSTALL = "Install pytest-entropy"

pytestmark = pytest.mark.skipif(shutil.which("bash") is None, reason="the steps are bash")


def _environment(tmp: Path) -> dict[str, str]:
    """``pytest-entropy`` and ``python3`` of this checkout first on PATH, as after the
    workflow's install step."""
    bin_dir = tmp / "bin"
    if not bin_dir.is_dir():
        bin_dir.mkdir()
        for name, module in (("pytest-entropy", "pytest_entropy"), ("pytest", "pytest")):
            launcher = bin_dir / name
            launcher.write_text(
                f'#!/bin/sh\nexec "{sys.executable}" -m {module} "$@"\n', encoding="utf-8"
            )
            launcher.chmod(0o755)
        (bin_dir / "python3").symlink_to(sys.executable)
    python_path = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    return {
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": python_path,
        "CI": "true",
        "GITHUB_BASE_REF": "main",
        "GITHUB_STEP_SUMMARY": str(tmp / "summary.md"),
        "PI_CODING_AGENT_DIR": str(tmp / "no-agent"),
    }


def _project(tmp: Path) -> Path:
    """A tool author's repository: the surface, recorded sessions and the baseline."""
    project = tmp / "project"
    (project / "tools").mkdir(parents=True)
    shutil.copy(DEMO / "surface.json", project / "tools" / "surface.json")
    shutil.copytree(DEMO / "sessions", project / "sessions")
    (project / "entropy-ci").mkdir()
    shutil.copy(DEMO / "surface.json", project / "entropy-ci" / "base-surface.json")
    created = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest_entropy",
            "freedom",
            "--surface",
            "tools/surface.json",
            "--baseline",
            "entropy-baseline.json",
        ],
        cwd=project,
        env={**os.environ, **_environment(tmp), "CI": ""},
        capture_output=True,
        text=True,
    )
    assert created.returncode == 0, created.stderr
    return project


def _by_name(results: list[StepResult]) -> dict[str, StepResult]:
    return {result.name: result for result in results}


def test_the_example_is_a_pull_request_workflow() -> None:
    document = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    assert "pull_request" in document[True]  # YAML 1.1 reads the key `on` as true
    job = load_job(WORKFLOW)
    names = [step.get("name") for step in job["steps"] if "run" in step]
    assert names == [
        INSTALL,
        "Base branch surface",
        "Surface diff against the base branch",
        "Freedom ratchet",
        "Schema lint",
        "Certify the recorded sessions",
    ]


def test_the_example_passes_on_an_unchanged_surface(tmp_path: Path) -> None:
    project = _project(tmp_path)
    results = run_steps(load_job(WORKFLOW), cwd=project, env=_environment(tmp_path), skip=[INSTALL])
    assert {r.name: r.code for r in results} == dict.fromkeys(
        [
            "Base branch surface",
            "Surface diff against the base branch",
            "Freedom ratchet",
            "Schema lint",
            "Certify the recorded sessions",
        ],
        0,
    ), [(r.name, r.stderr[-400:]) for r in results]
    assert not any("::error" in result.stdout for result in results)
    summary = (tmp_path / "summary.md").read_text(encoding="utf-8")
    assert "## Tool surface diff against the base branch" in summary
    assert "Static freedom 18.136988 → 18.136988." in summary
    assert "No schema changed." in summary
    assert "## Freedom ratchet" in summary
    assert "entropy ratchet holds for 'surface' in entropy-baseline.json" in summary
    assert "## Schema lint: PASS" in summary
    assert "## Entropy certification (metric v2): PASS" in summary
    report = json.loads((project / "entropy-ci" / "certification.json").read_text("utf-8"))
    assert report["evaluation"]["passed"] is True
    assert report["corpus"]["totals"]["operations"] == 34


def test_the_example_annotates_a_loosened_schema(tmp_path: Path) -> None:
    project = _project(tmp_path)
    surface_path = project / "tools" / "surface.json"
    surface = json.loads(surface_path.read_text(encoding="utf-8"))
    flaky = next(a for a in surface["actions"] if a["ref"] == "mcp.flaky.sync")
    flaky["inputSchema"].pop("additionalProperties")
    surface_path.write_text(json.dumps(surface, indent=2) + "\n", encoding="utf-8")
    line = next(
        number
        for number, text in enumerate(surface_path.read_text("utf-8").splitlines(), 1)
        if '"mcp.flaky.sync"' in text
    )
    results = _by_name(
        run_steps(load_job(WORKFLOW), cwd=project, env=_environment(tmp_path), skip=[INSTALL])
    )
    diff = results["Surface diff against the base branch"]
    assert diff.code == 1
    assert (
        f"::error file=tools/surface.json,line={line},title=entropy: schema loosened::"
        "mcp.flaky.sync:*: additionalProperties (false -> true)"
    ) in diff.stdout.splitlines()
    assert "::error file=tools/surface.json,line=1,title=entropy: freedom rose::" in diff.stdout
    ratchet = results["Freedom ratchet"]
    assert ratchet.code == 1
    assert "title=entropy: freedom ratchet::" in ratchet.stdout
    # the later checks still ran (if: always()); lint passed, and the certification's
    # surface-contained check (issue 29) names the same loosening against the baseline
    assert results["Schema lint"].code == 0
    certify = results["Certify the recorded sessions"]
    assert certify.code == 1
    assert "::error title=entropy certification: surface-contained::" in certify.stdout
    assert "mcp.flaky.sync" in certify.stdout
    summary = (tmp_path / "summary.md").read_text(encoding="utf-8")
    assert "| loosened | `mcp.flaky.sync` | `*` | additionalProperties |" in summary


def test_the_example_annotates_a_failed_certification(tmp_path: Path) -> None:
    project = _project(tmp_path)
    shutil.rmtree(project / "sessions")
    (project / "sessions").mkdir()  # a corpus that measured nothing must not pass
    results = _by_name(
        run_steps(load_job(WORKFLOW), cwd=project, env=_environment(tmp_path), skip=[INSTALL])
    )
    certify = results["Certify the recorded sessions"]
    assert certify.code == 1
    assert "::error title=entropy certification: corpus-mode::" in certify.stdout
    summary = (tmp_path / "summary.md").read_text(encoding="utf-8")
    assert "## Entropy certification (metric v2): FAIL" in summary


def test_a_missing_baseline_fails_the_ratchet_step(tmp_path: Path) -> None:
    """docs/ci.md: with CI set, a missing entry fails; the example must not pass it with a
    notice (issue 26, item 19)."""
    project = _project(tmp_path)
    (project / "entropy-baseline.json").unlink()
    results = _by_name(
        run_steps(load_job(WORKFLOW), cwd=project, env=_environment(tmp_path), skip=[INSTALL])
    )
    ratchet = results["Freedom ratchet"]
    assert ratchet.code == 1
    assert "title=entropy: no freedom baseline::no entropy-baseline.json" in ratchet.stdout
    assert not (project / "entropy-baseline.json").exists()  # CI never writes one
    # the later checks still ran (if: always()) and passed
    assert results["Schema lint"].code == 0
    assert results["Certify the recorded sessions"].code == 0


def _git(project: Path, *argv: str) -> None:
    subprocess.run(
        ["git", "-c", "user.email=ci@example.invalid", "-c", "user.name=ci", *argv],
        cwd=project,
        check=True,
        capture_output=True,
    )


@pytest.fixture
def repository(tmp_path: Path) -> Path:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    project = _project(tmp_path)
    _git(project, "init", "-q", "-b", "main")
    _git(project, "add", "tools", "entropy-baseline.json")
    _git(project, "commit", "-qm", "surface")
    _git(project, "update-ref", "refs/remotes/origin/main", "HEAD")
    return project


def _loosen(project: Path) -> None:
    path = project / "tools" / "surface.json"
    surface = json.loads(path.read_text(encoding="utf-8"))
    surface["actions"][0]["inputSchema"].pop("additionalProperties", None)
    surface["actions"][0]["inputSchema"]["properties"]["extra"] = {"type": "string"}
    path.write_text(json.dumps(surface), encoding="utf-8")


def _shell(command: str, project: Path, env: dict[str, str]) -> int:
    return subprocess.run(
        ["bash", "-eo", "pipefail", "-c", command],
        cwd=project,
        env={**os.environ, **env},
        capture_output=True,
    ).returncode


def _gitlab_jobs() -> dict[str, dict[str, Any]]:
    """The GitLab file's jobs (hidden ``.name`` templates merged in through ``extends``)."""
    document = yaml.safe_load(GITLAB.read_text(encoding="utf-8"))
    jobs: dict[str, dict[str, Any]] = {}
    for name, job in document.items():
        if name.startswith(".") or not isinstance(job, dict) or "script" not in job:
            continue
        template = document.get(job.get("extends", ""), {})
        merged = {**template, **job}
        merged["variables"] = {**template.get("variables", {}), **job.get("variables", {})}
        jobs[name] = merged
    return jobs


def _run_gitlab_jobs(project: Path, tmp: Path) -> dict[str, list[tuple[str, int]]]:
    """Each job's script as GitLab runs it (the install in ``before_script`` skipped): its
    commands in order, stopping at the first that fails. ``git fetch`` has no remote here."""
    ran: dict[str, list[tuple[str, int]]] = {}
    for name, job in _gitlab_jobs().items():
        env = {
            **_environment(tmp),
            **job["variables"],
            "CI_MERGE_REQUEST_TARGET_BRANCH_NAME": "main",
        }
        ran[name] = []
        for command in job["script"]:
            if command.startswith("git fetch"):
                continue
            code = _shell(command, project, env)
            ran[name].append((command, code))
            if code != 0:
                break
    return ran


def _gitlab_codes(ran: dict[str, list[tuple[str, int]]], word: str) -> list[int]:
    return [code for steps in ran.values() for command, code in steps if word in command]


def test_the_gitlab_jobs_run_their_scripts(repository: Path, tmp_path: Path) -> None:
    ran = _run_gitlab_jobs(repository, tmp_path)
    assert [code for steps in ran.values() for _, code in steps] == [0, 0, 0, 0]
    assert (repository / "entropy-certification.xml").is_file()
    assert "corpus-mode" in (repository / "entropy-certification.md").read_text("utf-8")
    certify = next(job for job in _gitlab_jobs().values() if "--entropy-certify" in str(job))
    assert certify["artifacts"]["when"] == "always"


def test_a_failing_gitlab_check_does_not_stop_the_others(repository: Path, tmp_path: Path) -> None:
    _loosen(repository)
    ran = _run_gitlab_jobs(repository, tmp_path)
    assert _gitlab_codes(ran, "pytest-entropy diff") == [1]  # the diff against the target
    assert _gitlab_codes(ran, "pytest-entropy freedom") == [1]  # the freedom ratchet
    # lint and certify still ran; lint passes (the loosened surface is clean), and the
    # certification's surface-contained check (issue 29) fails on the same loosening
    assert _gitlab_codes(ran, "pytest-entropy lint") == [0]
    assert _gitlab_codes(ran, "--entropy-certify") == [1]
    junit = (repository / "entropy-certification.xml").read_text("utf-8")
    assert 'name="surface-contained"' in junit and "<failure" in junit
    assert (repository / "entropy-certification.xml").is_file()


def test_a_missing_baseline_fails_the_gitlab_ratchet(repository: Path, tmp_path: Path) -> None:
    (repository / "entropy-baseline.json").unlink()
    ran = _run_gitlab_jobs(repository, tmp_path)
    assert _gitlab_codes(ran, "pytest-entropy freedom") == [1]
    assert not (repository / "entropy-baseline.json").exists()  # CI never writes one


def test_the_pre_commit_hooks(repository: Path, tmp_path: Path) -> None:
    hooks = {hook["id"]: hook for hook in yaml.safe_load(HOOKS.read_text(encoding="utf-8"))}
    assert set(hooks) == {"entropy-diff", "entropy-freedom", "entropy-lint"}
    env = _environment(tmp_path)
    env["CI"] = ""
    commands = {
        hook_id: " ".join([hook["entry"], *map(shlex.quote, hook["args"])])
        for hook_id, hook in hooks.items()
    }
    for hook in hooks.values():
        assert hook["language"] == "python" and hook["pass_filenames"] is False
    assert {k: _shell(c, repository, env) for k, c in commands.items()} == dict.fromkeys(hooks, 0)
    _loosen(repository)
    assert _shell(commands["entropy-diff"], repository, env) == 1
    assert _shell(commands["entropy-freedom"], repository, env) == 1
    assert _shell(commands["entropy-lint"], repository, env) == 0


def test_diff_names_a_missing_committed_file(
    repository: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from pytest_entropy.cli.app import main

    monkeypatch.chdir(repository)
    assert main(["diff", "git:HEAD:tools/surface.json", "tools/surface.json"]) == 0
    assert main(["diff", "git:HEAD:tools/nope.json", "tools/surface.json"]) == 2
    assert "git:HEAD:tools/nope.json: git show failed: fatal:" in capsys.readouterr().err
    assert main(["diff", "git:HEAD", "tools/surface.json"]) == 2
    assert "expected git:REV:PATH" in capsys.readouterr().err
