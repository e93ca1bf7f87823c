"""Check the wheel matrix of .github/workflows/wheels.yml with cibuildwheel itself.

For every runner of the matrix, ``cibuildwheel --print-build-identifiers`` (reading
``[tool.cibuildwheel]`` in pyproject.toml) must list exactly one abi3 build (``cp311-``) and
one free-threaded build (``cp314t-``) per wheel platform of that runner: manylinux and
musllinux on Linux, macosx on macOS, win on Windows. Together the runners must cover Linux
x86_64 and aarch64, macOS x86_64 and arm64, and Windows AMD64. Nothing is built.

    python .ci/check_wheel_matrix.py CIBUILDWHEEL

Exit status 1 when an identifier is missing or extra.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORKFLOW = ROOT / ".github" / "workflows" / "wheels.yml"
ENTRY = re.compile(
    r"\{\s*runner:\s*(?P<runner>[\w.-]+),\s*platform:\s*(?P<platform>\w+),"
    r"\s*arch:\s*(?P<arch>\w+)\s*\}"
)
COVERED = {
    ("linux", "x86_64"),
    ("linux", "aarch64"),
    ("macos", "x86_64"),
    ("macos", "arm64"),
    ("windows", "AMD64"),
}
BUILDS = ("cp311", "cp314t")


def wheel_platforms(platform: str, arch: str) -> list[str]:
    if platform == "linux":
        return [f"manylinux_{arch}", f"musllinux_{arch}"]
    if platform == "macos":
        return [f"macosx_{arch}"]
    return [f"win_{arch.lower()}"]


def main(cibuildwheel: str) -> int:
    entries = [match.groupdict() for match in ENTRY.finditer(WORKFLOW.read_text("utf-8"))]
    if not entries:
        print(f"{WORKFLOW}: no matrix entries found", file=sys.stderr)
        return 1
    environment = {k: v for k, v in os.environ.items() if not k.startswith("CIBW_")}
    failed = 0
    for entry in entries:
        platform, arch = entry["platform"], entry["arch"]
        done = subprocess.run(
            [cibuildwheel, "--print-build-identifiers", "--platform", platform, "--archs", arch],
            cwd=ROOT,
            env=environment,
            capture_output=True,
            text=True,
            check=False,
        )
        found = sorted(done.stdout.split())
        wanted = sorted(f"{b}-{w}" for b in BUILDS for w in wheel_platforms(platform, arch))
        verdict = "ok" if done.returncode == 0 and found == wanted else "DIFFERS"
        print(f"{entry['runner']} ({platform} {arch}): {' '.join(found) or '-'}: {verdict}")
        if verdict != "ok":
            failed += 1
            print(f"    expected {' '.join(wanted)}; {done.stderr.strip()}", file=sys.stderr)
    missing = COVERED - {(entry["platform"], entry["arch"]) for entry in entries}
    for platform, arch in sorted(missing):
        print(f"no runner builds {platform} {arch}", file=sys.stderr)
    return 1 if failed or missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
