//! Standard output as a fallible writer: `outln!`/`out!` return a [`StdoutError`] instead of
//! panicking like `println!` when the reader is gone (`roboaudit … | head`) or the disk is full.
//! Every result file is written before anything is printed, so a failed print loses nothing;
//! `main` ends such a run with exit code 1, silently for a closed pipe (its reader asked for no
//! more).

use std::io::Write;

/// Standard output could not be written.
#[derive(Debug, thiserror::Error)]
#[error("cannot write to standard output")]
pub struct StdoutError(#[source] pub std::io::Error);

impl StdoutError {
    /// Whether the reader closed the pipe (`ErrorKind::BrokenPipe`).
    pub fn is_closed_pipe(&self) -> bool {
        self.0.kind() == std::io::ErrorKind::BrokenPipe
    }
}

/// Writes `args` (and a newline when `newline`) to standard output and flushes it.
///
/// # Errors
/// [`StdoutError`] when the write or the flush fails.
pub fn write(args: std::fmt::Arguments<'_>, newline: bool) -> Result<(), StdoutError> {
    let mut out = std::io::stdout().lock();
    out.write_fmt(args)
        .and_then(|()| {
            if newline {
                out.write_all(b"\n")
            } else {
                Ok(())
            }
        })
        .and_then(|()| out.flush())
        .map_err(StdoutError)
}

/// `println!` that returns `Result<(), StdoutError>`.
macro_rules! outln {
    () => {
        $crate::stdout::write(format_args!(""), true)
    };
    ($($arg:tt)*) => {
        $crate::stdout::write(format_args!($($arg)*), true)
    };
}

/// `print!` that returns `Result<(), StdoutError>`.
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::stdout::write(format_args!($($arg)*), false)
    };
}
