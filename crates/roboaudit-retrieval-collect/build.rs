//! Adds an rpath to the MuJoCo library directory so this crate's tests, benches and examples run
//! without LD_LIBRARY_PATH (the testbed's build script only reaches the testbed's own targets).

fn main() {
    println!("cargo::rerun-if-env-changed=MUJOCO_DYNAMIC_LINK_DIR");
    if let Ok(dir) = std::env::var("MUJOCO_DYNAMIC_LINK_DIR") {
        println!("cargo::rustc-link-arg=-Wl,-rpath,{dir}");
    }
}
