"""HTML report size and browser render time on the 64 MB generated corpus; docs screenshots.

    python bench/bench_html.py [--corpus DIR] [--megabytes 64] [--files 100] [--repeat 3]
    python bench/bench_html.py --screenshots docs/screenshots

The benchmark generates (once) the corpus ``bench_measure.py`` uses, writes the measure and
status pages with ``--html``, and loads each in Debian's headless chromium (Playwright with
``executable_path``; no browser download), printing the page size, the size per session and
per operation, and the best load time (navigation start to the load event, charts drawn).
The page must stay small because the charts grow with sessions, never with operations: a
second status page over a window of twice the sessions shows how it scales.

``--screenshots DIR`` instead renders one page of each kind from the demo corpus and saves
``DIR/<kind>.png`` (the images the README shows).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO))

from bench_measure import ensure_corpus  # noqa: E402

from pytest_entropy.cli.app import main as cli  # noqa: E402
from pytest_entropy.report.html import render_html  # noqa: E402
from tests.browser_support import block_network, chromium_context  # noqa: E402

DEMO = REPO / "corpora" / "demo"


@contextlib.contextmanager
def browser() -> Iterator[Any]:
    with (
        tempfile.TemporaryDirectory() as profile,
        chromium_context(profile, height=1000) as context,
    ):
        yield context


def quiet(argv: list[str]) -> int:
    with contextlib.redirect_stdout(io.StringIO()):
        return cli(argv)


def load_ms(context: Any, path: Path, repeat: int) -> tuple[float, list[str]]:
    """Best navigation-start-to-load time (ms), and any console errors or blocked requests."""
    problems: list[str] = []
    timings = []
    for _ in range(repeat):
        page = context.new_page()
        page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: problems.append(str(e)))
        block_network(page, lambda url: problems.append(f"network request {url}"))
        page.goto(path.resolve().as_uri(), wait_until="load")
        timings.append(
            page.evaluate(
                "() => { const n = performance.getEntriesByType('navigation')[0];"
                " return n.loadEventEnd - n.startTime; }"
            )
        )
        page.close()
    return min(timings), problems


def window_document(files: list[Path]) -> dict[str, Any]:
    """A status document whose window is every file given (newest first as given)."""
    from pytest_entropy.core.meter import MeterState
    from pytest_entropy.core.status import measure_session_corpus, ratchet_verdict
    from pytest_entropy.ingest.diagnostics import ScanDiagnostics
    from pytest_entropy.sources.scan import read_file_evidence

    diagnostics = ScanDiagnostics()
    states: list[tuple[str, MeterState | None]] = []
    for index, path in enumerate(files):
        read = read_file_evidence(path, diagnostics=diagnostics)
        state = None
        if read is not None:
            state = MeterState(retain_terms=False)
            state.add_traces(read.traces)
        states.append((f"{index:04d}-{path.name}", state))
    corpus = measure_session_corpus(states)
    return {
        "surface": {"digest": "", "actions": 0, "freedom": {"actions": [], "total": 0, "mean": 0}},
        "corpus": corpus.to_json(),
        "verdict": ratchet_verdict(corpus),
        "compiled": {},
        "review": [],
        "lines": [],
        "diagnostics": diagnostics.to_json(),
    }


def benchmark(args: argparse.Namespace) -> None:
    ensure_corpus(args.corpus, args.files, args.megabytes)
    corpus_bytes = sum(p.stat().st_size for p in args.corpus.glob("*.jsonl"))
    out = Path(tempfile.mkdtemp(prefix="bench-html-"))
    pages = {}
    started = time.perf_counter()
    quiet(["measure", "--sessions", str(args.corpus), "--html", str(out / "measure.html")])
    pages["measure"] = time.perf_counter() - started
    started = time.perf_counter()
    quiet(["status", "--sessions", str(args.corpus), "--html", str(out / "status.html")])
    pages["status"] = time.perf_counter() - started
    # `status` shows a window of the newest few sessions; the whole corpus as one window,
    # and each file counted twice, shows what one more session costs the page.
    files = sorted(args.corpus.glob("*.jsonl"))
    for name, window in (("window-1x", files), ("window-2x", files + files)):
        (out / f"{name}.html").write_text(render_html(window_document(window)), encoding="utf-8")
    import json

    capture = io.StringIO()
    with contextlib.redirect_stdout(capture):
        cli(["measure", "--sessions", str(args.corpus), "--json"])
    operations = json.loads(capture.getvalue())["report"]["totals"]["operations"]
    print(f"corpus: {corpus_bytes / 1e6:.1f} MB · {args.files} files · {operations} operations")
    with browser() as context:
        for name in ("measure", "status", "window-1x", "window-2x"):
            path = out / f"{name}.html"
            size = path.stat().st_size
            best, problems = load_ms(context, path, args.repeat)
            sessions = {"status": 8, "window-1x": args.files, "window-2x": 2 * args.files}
            per = f" · {size / sessions[name] / 1e3:.1f} kB per session" if name in sessions else ""
            print(
                f"{name}: {size / 1e3:.0f} kB ({size / corpus_bytes * 100:.2f}% of the corpus,"
                f" {size / operations:.2f} B per operation{per}) · browser load"
                f" {best:.0f} ms (best of {args.repeat})"
                + (f" · PROBLEMS {problems}" if problems else "")
            )
    for name, seconds in pages.items():
        print(f"{name} --html: {seconds:.1f} s for the whole command (reading included)")


def screenshots(directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="screens-"))
    base = ["--sessions", str(DEMO / "sessions"), "--surface", str(DEMO / "surface.json")]
    artifact = work / "artifact.json"
    quiet(["compile", *base, "--out", str(artifact)])
    runs = {
        "measure": ["measure", *base],
        "status": ["status", *base],
        "compile": ["compile", *base],
        "trial": ["trial", *base, "--artifact", str(artifact)],
        "certify": ["certify", *base, "--trial", "--artifact", str(artifact)],
    }
    with browser() as context:
        for kind, argv in runs.items():
            page_path = work / f"{kind}.html"
            quiet([*argv, "--html", str(page_path)])
            page = context.new_page()
            page.goto(page_path.as_uri(), wait_until="load")
            page.screenshot(path=str(directory / f"{kind}.png"))
            page.close()
            print(f"{directory / f'{kind}.png'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=HERE / "out" / "corpus-64")
    parser.add_argument("--megabytes", type=float, default=64)
    parser.add_argument("--files", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--screenshots", type=Path, metavar="DIR")
    args = parser.parse_args()
    if args.screenshots is not None:
        screenshots(args.screenshots)
    else:
        benchmark(args)


if __name__ == "__main__":
    main()
