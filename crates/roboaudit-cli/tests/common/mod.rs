//! Helpers shared by the CLI integration tests: run the built `roboaudit` binary, read its output.
#![allow(clippy::unwrap_used, dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Runs the `roboaudit` binary of this build with `args`.
pub fn roboaudit(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_roboaudit"))
        .args(args)
        .output()
        .unwrap()
}

/// Stdout, stderr and the exit status of a finished command, as text.
pub fn text(o: &Output) -> String {
    // The status last: a process killed by a signal (or out of memory) prints nothing itself.
    format!(
        "{}\n{}\n[{}]",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
        o.status
    )
}

/// `memory collect --policy faithful --pairs 1 --seeds 1 --out OUT` and `extra`: the smallest
/// records the memory commands' tests read.
pub fn collect_one_faithful_pair(out: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "memory",
        "collect",
        "--policy",
        "faithful",
        "--pairs",
        "1",
        "--seeds",
        "1",
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    roboaudit(&args)
}

/// Every file under `root` (relative path, bytes), sorted.
pub fn tree(root: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<(PathBuf, Vec<u8>)>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                let rel = p.strip_prefix(root).unwrap().to_path_buf();
                out.push((rel, std::fs::read(&p).unwrap()));
            }
        }
    }
    let mut out = Vec::new();
    walk(root, root, &mut out);
    out.sort();
    out
}

/// The smallest `retrieval collect` of a learned mechanism (`policy`, `policy-dr`): Stack,
/// `library` experiences, 3 query scenes (the fewest allowed), 1 seed, one execution per part,
/// into `out`, with `extra` arguments after.
pub fn collect_learned(mechanism: &str, library: &str, out: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "retrieval",
        "collect",
        "--task",
        "stack",
        "--mechanism",
        mechanism,
        "--library",
        library,
        "--scenes",
        "3",
        "--seeds",
        "1",
        "--chunk",
        "1",
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    roboaudit(&args)
}

/// The line `retrieval collect` prints for the appearance-caused failures an audit records in
/// `run.appearance_caused_failures` (`failures`): the counts, or "undefined" with no execution.
pub fn appearance_line(failures: &serde_json::Value) -> String {
    if failures["executions"] == 0 {
        "appearance-caused failures: undefined".to_owned()
    } else {
        format!(
            "appearance-caused failures: {} of {} executions",
            failures["failed"], failures["executions"]
        )
    }
}

/// A synthetic chain run folder in `TMP/run` (the layout `fqe collect` writes: 80 episodes,
/// three target policies of quality 0.9, 0.6 and 0.2 with four action samples per frame, exact
/// ground truth).
pub fn chain_run_folder() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let run = roboaudit_fqe::synthetic::ChainRun {
        episodes: 80,
        quality: vec![0.9, 0.6, 0.2],
        samples: 4,
        ..roboaudit_fqe::synthetic::ChainRun::default()
    };
    roboaudit_fqe::synthetic::write_chain_run(&dir.path().join("run"), &run).unwrap();
    dir
}

/// Every file and folder under `dir`, deepest first within each folder; empty when `dir` does
/// not exist.
pub fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in entries {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        }
        out.push(p);
    }
    out
}

/// The arguments of `fqe fit --run RUN --out OUT` followed by `extra`.
fn fqe_fit_args<'a>(run: &'a Path, out: &'a Path, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "fqe",
        "fit",
        "--run",
        run.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    args
}

/// `fqe fit --run RUN --out OUT` and `extra`.
pub fn fqe_fit(run: &Path, out: &Path, extra: &[&str]) -> Output {
    roboaudit(&fqe_fit_args(run, out, extra))
}

/// `fqe fit --run RUN --out OUT --no-neural --components N` and `extra`, on one thread: the
/// quick linear fit of the FQE tests.
pub fn fit_linear(run: &Path, out: &Path, components: &str, extra: &[&str]) -> Output {
    let linear = [&["--no-neural", "--components", components][..], extra].concat();
    Command::new(env!("CARGO_BIN_EXE_roboaudit"))
        .args(fqe_fit_args(run, out, &linear))
        .env("RAYON_NUM_THREADS", "1")
        .output()
        .unwrap()
}
