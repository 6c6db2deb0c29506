//! `roboaudit`: the command-line tool (the program lives in the library, `roboaudit_cli::main`).

fn main() {
    roboaudit_cli::main();
}
