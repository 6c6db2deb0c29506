//! Adds an rpath to the MuJoCo library directory so that this crate's tests, benches and examples run
//! without LD_LIBRARY_PATH. `MUJOCO_DYNAMIC_LINK_DIR` comes from the user's environment or, by default,
//! from `.cargo/config.toml` (filled by `scripts/setup_mujoco.sh`). A link-arg only reaches this
//! package's own targets: binaries of other crates (the CLI) need the same line in their build script.

fn main() {
    println!("cargo::rerun-if-env-changed=MUJOCO_DYNAMIC_LINK_DIR");
    if let Ok(dir) = std::env::var("MUJOCO_DYNAMIC_LINK_DIR") {
        println!("cargo::rustc-link-arg=-Wl,-rpath,{dir}");
    }
}
