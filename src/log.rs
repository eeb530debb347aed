//! Diagnostics to stderr, prefixed with the PE, filtered by RSHMEM_DEBUG / SHMEM_DEBUG /
//! NVSHMEM_DEBUG (TRACE adds every collective, barrier and allocation, and the start-up steps).

use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};

use crate::env::LogLevel;

static LEVEL: AtomicU8 = AtomicU8::new(1);
static PE: AtomicUsize = AtomicUsize::new(usize::MAX);

pub fn set(level: LogLevel, pe: usize) {
    LEVEL.store(level as u8, Ordering::Relaxed);
    PE.store(pe, Ordering::Relaxed);
}

pub fn enabled(level: LogLevel) -> bool {
    level as u8 <= LEVEL.load(Ordering::Relaxed)
}

/// The "rshmem: PE 3: " prefix (no PE before init).
pub fn prefix() -> String {
    match PE.load(Ordering::Relaxed) {
        usize::MAX => "rshmem: ".to_string(),
        pe => format!("rshmem: PE {pe}: "),
    }
}

pub fn emit(level: LogLevel, message: &str) {
    if enabled(level) {
        write_line(&format!("{}{message}", prefix()));
    }
}

/// Writes `line` and a newline to stderr in one write, so lines from PEs sharing a pipe never
/// interleave mid-line (`eprintln!` writes each formatted piece separately).
pub fn write_line(line: &str) {
    use std::io::Write;
    let _ = std::io::stderr().write_all(format!("{line}\n").as_bytes());
}

pub fn warn(message: &str) {
    emit(LogLevel::Warn, message)
}

pub fn info(message: &str) {
    emit(LogLevel::Info, message)
}

/// RSHMEM_DEBUG=TRACE: the message is built only when tracing is on.
#[inline]
pub fn trace(message: impl FnOnce() -> String) {
    if enabled(LogLevel::Trace) {
        emit(LogLevel::Trace, &message());
    }
}
