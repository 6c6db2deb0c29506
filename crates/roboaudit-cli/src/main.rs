//! The `roboaudit` command-line tool.
fn main() {}
