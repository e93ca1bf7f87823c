//! The native core of pytest-entropy (issue 28): one crate, one module per job, safe Rust.
//! The plain Python in `pytest_entropy/core` and `pytest_entropy/ingest` is the
//! specification; `tests/vectors.rs` compares this crate with it on recorded vectors.

// No unsafe code of our own but the allocator's option calls (src/alloc.rs); only what
// PyO3's macros expand to, behind `python`.
#![cfg_attr(not(feature = "python"), forbid(unsafe_code))]

pub mod audit;
pub mod evidence;
pub mod guard;
pub mod jsnum;
pub mod json;
pub mod lines;
pub mod meter;
pub mod pool;
pub mod replay;
pub mod scan;
pub mod signature;
pub mod stringify;
pub mod tallies;
pub mod trial;
pub mod witness;
pub mod writer;

#[cfg(feature = "python")]
mod alloc;
#[cfg(feature = "python")]
mod python;
#[cfg(feature = "python")]
mod python_pool;
#[cfg(feature = "python")]
mod python_tallies;
#[cfg(feature = "python")]
mod python_writer;
