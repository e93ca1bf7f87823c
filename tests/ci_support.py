"""Run the ``run:`` steps of a GitHub Actions workflow locally, as the runner would.

Used by the tests of ``examples/`` and by the project's own ``.github/workflows/entropy.yml``
(which runs the example workflow on the demo corpus with this module), so the example that
users copy is the one that is tested. Each ``run:`` step runs with GitHub's default shell
(``bash --noprofile --norc -eo pipefail``) and the job's ``env`` (overridden by the caller's);
``uses:`` steps are skipped. As on GitHub, after a failed step only steps whose ``if:`` says
``always()`` or ``failure()`` run.

    python -m tests.ci_support WORKFLOW [--job NAME] [--skip STEP] [--env KEY=VALUE]...
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

__all__ = ["StepResult", "load_job", "run_steps"]


@dataclass(frozen=True)
class StepResult:
    name: str
    code: int | None  # None: skipped after an earlier failure
    stdout: str
    stderr: str


def load_job(workflow: Path, job: str | None = None) -> dict[str, Any]:
    """The job ``job`` (default: the only one) of a workflow file."""
    document = yaml.safe_load(workflow.read_text(encoding="utf-8"))
    jobs = document["jobs"]
    name = job or next(iter(jobs))
    return dict(jobs[name])


def _runs_after_failure(step: Mapping[str, Any]) -> bool:
    condition = str(step.get("if", ""))
    return "always()" in condition or "failure()" in condition


def run_steps(
    job: Mapping[str, Any],
    *,
    cwd: Path,
    env: Mapping[str, str],
    skip: Sequence[str] = (),
    timeout: float = 600,
) -> list[StepResult]:
    """Run the job's ``run:`` steps in ``cwd``; ``env`` overrides the job's ``env``."""
    base = {**os.environ, **{k: str(v) for k, v in (job.get("env") or {}).items()}, **env}
    results: list[StepResult] = []
    failed = False
    for number, step in enumerate(job["steps"]):
        if "run" not in step or step.get("name") in skip:
            continue
        name = str(step.get("name") or f"step {number}")
        if failed and not _runs_after_failure(step):
            results.append(StepResult(name, None, "", ""))
            continue
        step_env = {**base, **{k: str(v) for k, v in (step.get("env") or {}).items()}}
        with tempfile.NamedTemporaryFile("w", suffix=".sh", delete=False) as script:
            script.write(step["run"])
        try:
            done = subprocess.run(
                ["bash", "--noprofile", "--norc", "-eo", "pipefail", script.name],
                cwd=cwd,
                env=step_env,
                capture_output=True,
                text=True,
                timeout=timeout,
            )
        finally:
            os.unlink(script.name)
        results.append(StepResult(name, done.returncode, done.stdout, done.stderr))
        failed = failed or done.returncode != 0
    return results


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workflow", type=Path)
    parser.add_argument("--job")
    parser.add_argument("--skip", action="append", default=[], metavar="STEP")
    parser.add_argument("--env", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--cwd", type=Path, default=Path.cwd())
    args = parser.parse_args(argv)
    env = dict(item.split("=", 1) for item in args.env)
    results = run_steps(load_job(args.workflow, args.job), cwd=args.cwd, env=env, skip=args.skip)
    for result in results:
        state = "skipped" if result.code is None else f"exit {result.code}"
        print(f"::group::{result.name} ({state})")
        sys.stdout.write(result.stdout)
        sys.stderr.write(result.stderr)
        print("::endgroup::")
    return 1 if any(result.code for result in results) else 0


if __name__ == "__main__":
    raise SystemExit(main())
