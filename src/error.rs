//! One error type for the whole runtime. Every error names the C routine it surfaced in, says
//! what was wrong with which value, and (where there is one) how to fix it.

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
    NotMember,
    Bootstrap,
    System,
    Unsupported,
    Internal,
}

impl ErrorKind {
    /// The status returned by C routines that return one (0 is success).
    pub fn status(self) -> RshmemStatus {
        match self {
            ErrorKind::NotInitialized => RshmemStatus::ErrorNotInitialized,
            ErrorKind::InvalidPe | ErrorKind::InvalidArgument | ErrorKind::NotMember => RshmemStatus::ErrorInvalidArgument,
            ErrorKind::NotSymmetric => RshmemStatus::ErrorSymmetry,
            ErrorKind::OutOfMemory => RshmemStatus::ErrorOutOfMemory,
            ErrorKind::Unsupported => RshmemStatus::ErrorNotSupported,
            ErrorKind::Bootstrap | ErrorKind::System | ErrorKind::Internal => RshmemStatus::ErrorInternal,
        }
    }

    pub fn code(self) -> i32 {
        self.status() as i32
    }
}

#[derive(Clone, Debug)]
pub struct Error {
    pub kind: ErrorKind,
    /// The C routine the user called, e.g. `shmem_putmem`.
    pub routine: &'static str,
    pub message: String,
}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
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
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.routine, self.message)
    }
}

impl std::error::Error for Error {}
