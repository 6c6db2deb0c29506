//! The one build script of every package that links MuJoCo (the testbed and the packages whose tests,
//! benches, examples or binaries run it): adds an rpath to the MuJoCo library directory so they run
//! without LD_LIBRARY_PATH. A link-arg only reaches the package's own targets, hence one script shared
//! through `build = "../../build-support/mujoco_rpath.rs"` in each of those Cargo.toml files.
//! `MUJOCO_DYNAMIC_LINK_DIR` comes from the user's environment or, by default, from
//! `.cargo/config.toml` (filled by `scripts/setup_mujoco.sh`).

// Cargo reads build-script instructions from stdout; clippy exempts only scripts named build.rs.
#![allow(clippy::print_stdout)]

fn main() {
    println!("cargo::rerun-if-env-changed=MUJOCO_DYNAMIC_LINK_DIR");
    if let Ok(dir) = std::env::var("MUJOCO_DYNAMIC_LINK_DIR") {
        let arg = format!("-Wl,-rpath,{dir}");
        // `roboaudit-native` is the binary the Python wheel ships: a path into this build tree
        // means nothing on the user's machine, and in CI it would hide a launcher that failed to
        // point the binary at the `mujoco` package's library. Every other target gets the rpath.
        if std::env::var("CARGO_PKG_NAME").as_deref() == Ok("roboaudit-cli") {
            // Its only other linked targets are integration tests (cargo rejects an instruction
            // for a target kind the package lacks, such as examples).
            println!("cargo::rustc-link-arg-bin=roboaudit={arg}");
            println!("cargo::rustc-link-arg-tests={arg}");
        } else {
            println!("cargo::rustc-link-arg={arg}");
        }
    }
}
