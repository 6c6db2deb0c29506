//! `--gamma`: `fqe collect` and `fqe fit` take the same discounts, (0, 1] (SPEC §3: with γ = 0
//! every `V^π = E[γ^(T−1) · success]` is 0), and each `--help` says so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::{roboaudit, text};
use roboaudit_fqe::synthetic::{ChainRun, write_chain_run};

#[test]
fn both_commands_refuse_gamma_0_and_say_the_range() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    write_chain_run(
        &run,
        &ChainRun {
            episodes: 8,
            quality: vec![0.9, 0.2],
            samples: 2,
            ..ChainRun::default()
        },
    )
    .unwrap();
    let out = tmp.path().join("out");
    let (run_s, out_s) = (run.to_str().unwrap(), out.to_str().unwrap());
    for args in [
        vec!["fqe", "fit", "--run", run_s, "--out", out_s, "--gamma", "0"],
        vec!["fqe", "collect", "--small", "--out", out_s, "--gamma", "0"],
    ] {
        let o = roboaudit(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
        assert!(text(&o).contains("(0, 1]"), "{args:?}: {}", text(&o));
        assert!(!out.exists(), "{args:?} wrote {}", out.display());
    }
    for command in ["fit", "collect"] {
        let o = roboaudit(&["fqe", command, "--help"]);
        let help = String::from_utf8_lossy(&o.stdout)
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        assert!(help.contains("in (0, 1]"), "fqe {command} --help: {help}");
    }
}
