//! `roboaudit-native`: the same program as `roboaudit`, under the name the Python wheel gives the
//! binary. The wheel's `roboaudit` command is a Python launcher that finds libmujoco inside the
//! installed `mujoco` package and execs this binary with that library path (python/roboaudit/_launcher.py).

fn main() {
    roboaudit_cli::main();
}
