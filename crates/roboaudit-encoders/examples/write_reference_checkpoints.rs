//! Writes the random checkpoints of the PyTorch reference check into a folder (run by
//! `scripts/encoders_reference.py`): `cargo run -p roboaudit-encoders --example
//! write_reference_checkpoints -- DIR`.

#![allow(clippy::print_stderr)]

// The test image is the tests' business; only the writer is used here.
#[allow(dead_code)]
#[path = "../tests/common/reference.rs"]
mod reference;

fn main() {
    let Some(dir) = std::env::args_os().nth(1) else {
        eprintln!("usage: write_reference_checkpoints DIR");
        std::process::exit(2);
    };
    if let Err(e) = reference::write_checkpoints(std::path::Path::new(&dir)) {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}
