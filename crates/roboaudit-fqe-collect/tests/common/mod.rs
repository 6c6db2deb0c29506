//! Helpers shared by the collection's integration tests.
#![allow(clippy::unwrap_used)]

use std::path::Path;

/// Every file under `dir`, by path relative to it, with its bytes, in path order: two folders
/// hold the same collection exactly when these are equal.
pub fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(dir).unwrap().display().to_string();
                out.push((rel, std::fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}
