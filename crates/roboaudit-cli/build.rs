//! Adds an rpath to the MuJoCo library directory so that the `roboaudit` binary runs without
//! LD_LIBRARY_PATH (the testbed's own build script can only reach the testbed's targets).
//! `MUJOCO_DYNAMIC_LINK_DIR` comes from the user's environment or from `.cargo/config.toml`.

fn main() {
    println!("cargo::rerun-if-env-changed=MUJOCO_DYNAMIC_LINK_DIR");
    if let Ok(dir) = std::env::var("MUJOCO_DYNAMIC_LINK_DIR") {
        println!("cargo::rustc-link-arg=-Wl,-rpath,{dir}");
    }
}
