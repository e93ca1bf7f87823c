//! The extension's allocator: mimalloc 2 instead of the C library's malloc.
//!
//! The scan builds and drops a small tree per trace line, and the tallies many short
//! strings; under glibc's malloc that churn was a tenth of a command's samples, and
//! mimalloc takes 5-19 % off every command on the real-call corpus
//! (`docs/decisions.md`, "The allocator, and accumulators carried through the scans"). Only Rust's own allocations go through it:
//! the objects handed to Python are allocated by Python.
//!
//! Two settings keep it a good guest in someone else's interpreter:
//!
//! * **`local_dynamic_tls`** (a Cargo feature): the extension is loaded by `dlopen`, and a
//!   library loaded that way must not ask for static TLS (the initial-exec model), which a
//!   process that already loaded other such libraries may not have left ("cannot allocate
//!   memory in static TLS block").
//! * **Memory is returned at once** ([`configure`]): mimalloc 2 keeps freed pages resident
//!   for 10 ms by default, which added 10-20 MB to a command's peak; purging without delay
//!   keeps the peaks where glibc had them. A `MIMALLOC_PURGE_DELAY` in the environment
//!   still wins: it is only the default that changes.

use libmimalloc_sys::{mi_option_get, mi_option_set_default, mi_option_t, mi_version};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `mi_option_purge_delay` in mimalloc 2's `mi_option_e` (the crate exports no constant for
/// it); `tests/unit/test_native_allocator.py` checks that this index reads the documented
/// default.
const PURGE_DELAY: mi_option_t = 15;

/// The purge delay (milliseconds) before [`configure`] and after: what the module reports
/// as `allocator()`.
pub struct Settings {
    /// mimalloc's version as it numbers them (`mi_version()`: 20302 for 2.3.2).
    pub version: i64,
    pub purge_delay_default: i64,
    pub purge_delay: i64,
}

/// Purge freed memory without delay unless the environment says otherwise; called once,
/// when the module is initialised.
#[allow(clippy::useless_conversion)] // `c_long` is 32 bits on Windows, 64 here
pub fn configure() -> Settings {
    // SAFETY: mimalloc's option calls take any option index (out of range is ignored) and
    // only read and write its own option table; 0 is a valid delay. `mi_version` reads a
    // constant.
    let purge_delay_default = i64::from(unsafe { mi_option_get(PURGE_DELAY) });
    unsafe { mi_option_set_default(PURGE_DELAY, 0) };
    let purge_delay = i64::from(unsafe { mi_option_get(PURGE_DELAY) });
    Settings {
        version: i64::from(unsafe { mi_version() }),
        purge_delay_default,
        purge_delay,
    }
}
