//! Progress display on stderr that stays quiet when stdout or stderr is not a terminal (pipes, CI).

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;

/// True when progress should be drawn: both stdout and stderr are terminals and `CI` is unset.
fn interactive() -> bool {
    std::io::stdout().is_terminal()
        && std::io::stderr().is_terminal()
        && std::env::var_os("CI").is_none()
}

/// A spinner for a stage of unknown length, hidden when not interactive.
pub fn spinner(message: &'static str) -> ProgressBar {
    let pb = ProgressBar::with_draw_target(None, draw_target());
    pb.set_style(
        ProgressStyle::with_template("{spinner} {msg} {elapsed}")
            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
    );
    pb.set_message(message);
    pb.enable_steady_tick(std::time::Duration::from_millis(120));
    pb
}

/// A bar over `len` units of work with rate and ETA, hidden when not interactive. Advance it with `inc` from any
/// thread (indicatif's bar is `Sync`); call `finish_and_clear` when done.
pub fn bar(len: u64, message: &'static str) -> ProgressBar {
    let pb = ProgressBar::with_draw_target(Some(len), draw_target());
    pb.set_style(
        ProgressStyle::with_template(
            "{msg} [{bar:30}] {pos}/{len} {per_sec} ETA {eta} (elapsed {elapsed})",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> "),
    );
    pb.set_message(message);
    pb
}

fn draw_target() -> ProgressDrawTarget {
    if interactive() {
        ProgressDrawTarget::stderr()
    } else {
        ProgressDrawTarget::hidden()
    }
}

/// A progress display that clears itself from the terminal when dropped: the observer of a
/// library pipeline's step, which ends the step by dropping it.
pub struct ClearOnDrop(pub ProgressBar);

impl std::ops::Deref for ClearOnDrop {
    type Target = ProgressBar;

    fn deref(&self) -> &ProgressBar {
        &self.0
    }
}

impl Drop for ClearOnDrop {
    fn drop(&mut self) {
        self.0.finish_and_clear();
    }
}
