//! Helpers shared by the CLI integration tests: run the built `roboaudit` binary, read its output.
#![allow(clippy::unwrap_used, dead_code)]

use std::process::{Command, Output};

/// Runs the `roboaudit` binary of this build with `args`.
pub fn roboaudit(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_roboaudit"))
        .args(args)
        .output()
        .unwrap()
}

/// Stdout then stderr of a finished command, as text.
pub fn text(o: &Output) -> String {
    format!(
        "{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}
