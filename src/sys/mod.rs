//! Thin, named wrappers over the operating system calls the runtime needs. All `unsafe` that
//! talks to the OS lives here, each block with a `// SAFETY:` line; callers get safe functions.

pub mod fdpass;
pub mod longdouble;
pub mod phdr;
pub mod process;
pub mod random;
pub mod shm;
pub mod sockopt;

/// The last OS error as an `io::Error`.
pub fn last_os_error() -> std::io::Error {
    std::io::Error::last_os_error()
}
