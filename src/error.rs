//! One error type for the whole runtime. Every error says what was wrong with which value and
//! (where there is one) how to fix it; the C boundary (`capi::boundary`) names the routine the
//! user called, so the runtime below it does not carry routine names around.

use std::fmt;

use crate::abi::RshmemStatus;

/// What kind of failure; the C entry points map these to return codes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    NotInitialized,
    InvalidPe,
    NotSymmetric,
    InvalidArgument,
    OutOfMemory,
    /// The symmetric heap has no room for an allocation, found alike by every PE (each runs
    /// the same allocator over the same calls): the allocation routine returns NULL after a
    /// warning, as OpenSHMEM and NVSHMEM specify (`capi::AllocOrNull`).
    HeapFull,
    NotMember,
    Bootstrap,
    System,
    Unsupported,
    /// No GPU can be used: no driver, no device, or cuInit failed.
    NoGpu,
    Internal,
}

impl ErrorKind {
    /// The one table from error kinds to C return codes: what every C routine that returns a
    /// status returns for this kind, NVSHMEM's (nvshmem_*) and OpenSHMEM's (shmem_ctx_create,
    /// shmem_team_split_*) alike (0 is success).
    pub fn status(self) -> RshmemStatus {
        match self {
            ErrorKind::NotInitialized | ErrorKind::InvalidPe | ErrorKind::InvalidArgument | ErrorKind::NotMember => {
                RshmemStatus::ErrorInvalidValue
            }
            ErrorKind::OutOfMemory | ErrorKind::HeapFull => RshmemStatus::ErrorOutOfMemory,
            ErrorKind::Unsupported => RshmemStatus::ErrorNotSupported,
            ErrorKind::NotSymmetric => RshmemStatus::ErrorSymmetry,
            ErrorKind::NoGpu => RshmemStatus::ErrorGpuNotSelected,
            ErrorKind::Bootstrap | ErrorKind::System | ErrorKind::Internal => RshmemStatus::ErrorInternal,
        }
    }

    /// `status` as the C int the routines return.
    pub fn code(self) -> i32 {
        self.status() as i32
    }
}

#[derive(Clone, Debug)]
pub struct Error {
    pub kind: ErrorKind,
    /// The C routine the user called, e.g. `shmem_putmem`; empty (`UNNAMED`) until the C
    /// boundary fills it in.
    pub routine: &'static str,
    pub message: String,
}

pub type Result<T> = std::result::Result<T, Error>;

/// The routine of an error made below the C boundary, which names it (`Error::named`).
pub const UNNAMED: &str = "";

impl Error {
    /// An error of `kind`; the C boundary names the routine.
    pub fn of(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error::new(kind, UNNAMED, message)
    }
    /// A bad argument; the C boundary names the routine.
    pub fn invalid_value(message: impl Into<String>) -> Error {
        Error::of(ErrorKind::InvalidArgument, message)
    }
    /// A failed system call; the C boundary names the routine.
    pub fn os(what: &str, err: std::io::Error) -> Error {
        Error::of(ErrorKind::System, format!("{what} failed: {err}"))
    }
    /// The constructors below name the routine themselves: for threads of the runtime that no C
    /// routine runs (the proxy), and for code that still passes the name down.
    pub fn new(kind: ErrorKind, routine: &'static str, message: impl Into<String>) -> Error {
        Error { kind, routine, message: message.into() }
    }
    pub fn invalid(routine: &'static str, message: impl Into<String>) -> Error {
        Error::new(ErrorKind::InvalidArgument, routine, message)
    }
    pub fn system(routine: &'static str, what: &str, err: std::io::Error) -> Error {
        Error::new(ErrorKind::System, routine, format!("{what} failed: {err}"))
    }
    pub fn bootstrap(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::Bootstrap, "shmem_init", message)
    }
    /// The same error reported under the routine the user actually called.
    pub fn in_routine(mut self, routine: &'static str) -> Error {
        self.routine = routine;
        self
    }
    /// The same error with its routine left for the C boundary to name.
    pub fn unnamed(self) -> Error {
        self.in_routine(UNNAMED)
    }
    /// Names `routine` if nothing below the boundary did (what the C boundary does).
    pub fn named(mut self, routine: &'static str) -> Error {
        if self.routine.is_empty() {
            self.routine = routine;
        }
        self
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.routine.is_empty() {
            return f.write_str(&self.message);
        }
        write!(f, "{}: {}", self.routine, self.message)
    }
}

impl std::error::Error for Error {}

#[cfg(test)]
mod tests {
    use super::*;

    const KINDS: [ErrorKind; 12] = [
        ErrorKind::NotInitialized,
        ErrorKind::InvalidPe,
        ErrorKind::NotSymmetric,
        ErrorKind::InvalidArgument,
        ErrorKind::OutOfMemory,
        ErrorKind::HeapFull,
        ErrorKind::NotMember,
        ErrorKind::Bootstrap,
        ErrorKind::System,
        ErrorKind::Unsupported,
        ErrorKind::NoGpu,
        ErrorKind::Internal,
    ];

    /// The codes NVSHMEM 3.4.5 documents for nvshmemx_status, by name.
    const NVSHMEM_CODES: [(&str, i32); 8] = [
        ("NVSHMEMX_SUCCESS", 0),
        ("NVSHMEMX_ERROR_INVALID_VALUE", 1),
        ("NVSHMEMX_ERROR_OUT_OF_MEMORY", 2),
        ("NVSHMEMX_ERROR_NOT_SUPPORTED", 3),
        ("NVSHMEMX_ERROR_SYMMETRY", 4),
        ("NVSHMEMX_ERROR_GPU_NOT_SELECTED", 5),
        ("NVSHMEMX_ERROR_COLLECTIVE_LAUNCH_FAILED", 6),
        ("NVSHMEMX_ERROR_INTERNAL", 7),
    ];

    #[test]
    fn error_kinds_map_to_nvshmem_codes() {
        let code = |name: &str| NVSHMEM_CODES.iter().find(|(n, _)| *n == name).unwrap().1;
        for kind in KINDS {
            let expected = match kind {
                ErrorKind::OutOfMemory | ErrorKind::HeapFull => "NVSHMEMX_ERROR_OUT_OF_MEMORY",
                ErrorKind::Unsupported => "NVSHMEMX_ERROR_NOT_SUPPORTED",
                ErrorKind::NotSymmetric => "NVSHMEMX_ERROR_SYMMETRY",
                ErrorKind::NoGpu => "NVSHMEMX_ERROR_GPU_NOT_SELECTED",
                ErrorKind::Bootstrap | ErrorKind::System | ErrorKind::Internal => "NVSHMEMX_ERROR_INTERNAL",
                _ => "NVSHMEMX_ERROR_INVALID_VALUE",
            };
            assert_eq!(kind.code(), code(expected), "{kind:?} should return {expected}");
            assert_ne!(kind.code(), 0, "{kind:?} must not look like success");
        }
        assert_eq!(RshmemStatus::Success as i32, code("NVSHMEMX_SUCCESS"));
        assert_eq!(RshmemStatus::ErrorCollectiveLaunchFailed as i32, code("NVSHMEMX_ERROR_COLLECTIVE_LAUNCH_FAILED"));
    }

    /// The C declaration of the codes (device/rshmem_common.h) says the same as the table.
    #[test]
    fn c_header_declares_the_same_codes() {
        let header = include_str!("../device/rshmem_common.h");
        for (name, value) in NVSHMEM_CODES {
            let line = header
                .lines()
                .map(str::trim)
                .find(|l| l.starts_with(&format!("{name} =")))
                .unwrap_or_else(|| panic!("device/rshmem_common.h does not declare {name}"));
            assert_eq!(line, format!("{name} = {value},"), "device/rshmem_common.h disagrees on {name}");
        }
    }
}
