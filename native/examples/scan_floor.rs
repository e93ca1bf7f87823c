//! How near the core's own parser the scan runs: the scan of whole files beside two floors
//! of the same parser on the same lines, in one run (docs/performance.md, issue 28).
//!
//! * `scan`: `Scanner::feed` on each file in 1 MiB chunks, as `measure` reads it (a fresh
//!   scanner per file; the meter and the guard included, no evidence);
//! * `validate`: every line read with an empty selection: each byte checked exactly as the
//!   scan checks it, nothing built (what no selective read can go below);
//! * `build`: every line parsed into the core's own tree.
//!
//! `cargo run --release --example scan_floor --features python -- FILE...` (the feature
//! gives the extension's allocator, mimalloc, as in the module). Prints the best of
//! `ROUNDS` (default 5) for each, in seconds and MB/s.

use _core::json::{self, Select};
use _core::scan::Scanner;
use std::time::Instant;

const NOTHING: Select = Select::Members(&[]);

fn best(rounds: usize, mut run: impl FnMut() -> u64) -> (f64, u64) {
    let mut fastest = f64::INFINITY;
    let mut counted = 0;
    for _ in 0..rounds {
        let start = Instant::now();
        counted = run();
        fastest = fastest.min(start.elapsed().as_secs_f64());
    }
    (fastest, counted)
}

/// The non-empty lines of a buffer, split as the scanner splits them (memchr).
fn lines(data: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut start = 0;
    let ends = memchr::memchr_iter(b'\n', data).chain([data.len()]);
    ends.map(move |end| {
        let line = &data[start.min(end)..end];
        start = end + 1;
        line
    })
    .filter(|line| !line.is_empty())
}

fn main() {
    let files: Vec<Vec<u8>> = std::env::args()
        .skip(1)
        .map(|path| std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}")))
        .collect();
    let rounds = std::env::var("ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(5);
    let size: usize = files.iter().map(Vec::len).sum();
    let scan = best(rounds, || {
        let mut traces = 0;
        for data in &files {
            let mut scanner = Scanner::new(1 << 26, None, None);
            for chunk in data.chunks(1 << 20) {
                scanner.feed(chunk);
            }
            scanner.finish();
            traces += scanner.counts.traces;
        }
        traces
    });
    let files = &files;
    let parsed = |select: &'static Select| {
        move || {
            let mut read = 0;
            for data in files {
                read += lines(data)
                    .filter(|line| json::parse_selected(line, select).is_ok())
                    .count() as u64;
            }
            read
        }
    };
    let validate = best(rounds, parsed(&NOTHING));
    let build = best(rounds, parsed(&Select::All));
    println!("{} files, {:.1} MB", files.len(), size as f64 / 1e6);
    for (name, (seconds, counted), what) in [
        ("scan", scan, "traces"),
        ("validate", validate, "lines"),
        ("build", build, "lines"),
    ] {
        let rate = size as f64 / seconds / 1e6;
        println!("{name:>9}: {seconds:.3} s, {rate:.0} MB/s ({counted} {what})");
    }
}
