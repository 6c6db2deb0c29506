#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Merge and status on synthetic shard folders (job `j`'s file holds `job j`): the checks do not
//! need a collector.

use roboaudit_shard::{
    JobFiles, SHARD_FILE, SHARD_SCHEMA, Shard, ShardError, ShardManifest, check, check_parts,
    config_hash, merge, merge_checked, merge_with, status,
};
use std::path::{Path, PathBuf};

const JOBS: usize = 10;

fn manifest(shard: Shard, seed: u64) -> ShardManifest {
    ShardManifest {
        schema: SHARD_SCHEMA.into(),
        collection: "test".into(),
        config_hash: config_hash("test", &seed).unwrap(),
        shard,
        total_jobs: JOBS,
        job_files: JobFiles {
            dir: "parts".into(),
            prefix: "part-".into(),
            width: 4,
            suffix: ".txt".into(),
            companions: Vec::new(),
        },
        shared_files: vec!["run.json".into()],
        unit: "rows".into(),
        total_units: 47,
        units_per_job: 5,
    }
}

/// A shard folder with the jobs of `shard` below `upto`.
fn shard_dir(root: &Path, name: &str, shard: Shard, seed: u64, upto: usize) -> PathBuf {
    let dir = root.join(name);
    std::fs::create_dir_all(dir.join("parts")).unwrap();
    let m = manifest(shard, seed);
    ShardManifest::claim(&dir, Some(&m)).unwrap();
    std::fs::write(dir.join("run.json"), format!("seed {seed}")).unwrap();
    for j in shard.jobs(JOBS).filter(|&j| j < upto) {
        std::fs::write(dir.join(m.job_files.relative(j)), format!("job {j}")).unwrap();
    }
    dir
}

#[test]
fn merged_folder_holds_every_job_once_and_no_shard_manifest() {
    let root = tempfile::tempdir().unwrap();
    let dirs: Vec<PathBuf> = (0..3)
        .map(|i| {
            shard_dir(
                root.path(),
                &format!("s{i}"),
                Shard::new(i, 3).unwrap(),
                0,
                JOBS,
            )
        })
        .collect();
    let st = status(&dirs).unwrap();
    assert_eq!(st[1].done_jobs, [1, 4, 7]);
    // Units: jobs hold 5 rows each, the last (job 9) 47 - 45 = 2.
    assert_eq!(
        st.iter().map(|s| s.owned_units).collect::<Vec<_>>(),
        [17, 15, 15]
    );
    let out = root.path().join("merged");
    let m = merge(&dirs, &out).unwrap();
    assert_eq!((m.jobs, m.shared), (JOBS, 1));
    assert!(!out.join(SHARD_FILE).exists());
    assert_eq!(
        std::fs::read_to_string(out.join("run.json")).unwrap(),
        "seed 0"
    );
    for j in 0..JOBS {
        let f = out.join(format!("parts/part-{j:04}.txt"));
        assert_eq!(std::fs::read_to_string(f).unwrap(), format!("job {j}"));
    }
    assert_eq!(std::fs::read_dir(out.join("parts")).unwrap().count(), JOBS);
}

/// Shards of two collection kinds are named by kind, not as "another configuration".
#[test]
fn a_shard_of_another_collection_kind_is_named_by_its_kind() {
    let root = tempfile::tempdir().unwrap();
    let s0 = shard_dir(root.path(), "s0", Shard::new(0, 2).unwrap(), 0, JOBS);
    let mut m = manifest(Shard::new(1, 2).unwrap(), 0);
    m.collection = "memory-collect".into();
    m.config_hash = config_hash("memory-collect", &0_u64).unwrap();
    let s1 = root.path().join("s1");
    std::fs::create_dir_all(s1.join("parts")).unwrap();
    ShardManifest::claim(&s1, Some(&m)).unwrap();
    let out = root.path().join("out");
    let text = merge(&[s0, s1], &out).unwrap_err().to_string();
    assert!(
        text.contains("s1 (shard 1/2) is a shard of a memory-collect collection, while")
            && text.contains("(shard 0/2) is of a test collection"),
        "{text}"
    );
    assert!(!text.contains("another configuration"), "{text}");
    assert!(!out.exists());
}

#[test]
fn every_problem_is_named_and_nothing_is_written() {
    let root = tempfile::tempdir().unwrap();
    let s0 = shard_dir(root.path(), "s0", Shard::new(0, 3).unwrap(), 0, JOBS);
    let s1 = shard_dir(root.path(), "s1", Shard::new(1, 3).unwrap(), 0, 5);
    let other = shard_dir(root.path(), "other", Shard::new(2, 3).unwrap(), 9, JOBS);
    let out = root.path().join("out");
    let err = merge(&[s0.clone(), s1.clone(), other.clone()], &out).unwrap_err();
    assert!(matches!(err, ShardError::Inconsistent(_)));
    let text = err.to_string();
    assert!(
        text.contains("other (shard 2/3) comes from another configuration"),
        "{text}"
    );
    // Without the foreign shard: shard 2 missing. Its jobs are named.
    let text = merge(&[s0.clone(), s1.clone()], &out)
        .unwrap_err()
        .to_string();
    assert!(text.contains("shard 2/3 is missing"), "{text}");
    assert!(text.contains("job 2: parts/part-0002.txt"), "{text}");
    // With a proper shard 2: shard 1 is unfinished (jobs 7 missing).
    let s2 = shard_dir(root.path(), "s2", Shard::new(2, 3).unwrap(), 0, JOBS);
    let text = merge(&[s0.clone(), s1.clone(), s2.clone()], &out)
        .unwrap_err()
        .to_string();
    assert!(
        text.contains("shard 1/3")
            && text.contains("lacks 1 of its 3 jobs (job 7: parts/part-0007.txt)"),
        "{text}"
    );
    assert!(!out.exists());
    // A differing shared file with the same hash is refused.
    std::fs::write(s2.join("run.json"), "seed 1").unwrap();
    std::fs::write(s1.join("parts/part-0007.txt"), "job 7").unwrap();
    let text = merge(&[s0, s1, s2], &out).unwrap_err().to_string();
    assert!(text.contains("run.json differs between"), "{text}");
    // A folder without a shard manifest; a file; nothing.
    let err = status(&[root.path().to_path_buf()]).unwrap_err();
    assert!(matches!(err, ShardError::NotAShard { .. }), "{err}");
    let file = root.path().join("notes.txt");
    std::fs::write(&file, "x").unwrap();
    let err = status(&[file]).unwrap_err().to_string();
    assert!(
        err.ends_with("notes.txt: a file, not a shard folder"),
        "{err}"
    );
    let err = status(&[root.path().join("absent")])
        .unwrap_err()
        .to_string();
    assert!(err.ends_with("absent: no such folder"), "{err}");
}

#[test]
fn the_configuration_hash_changes_with_the_configuration_and_the_collection() {
    let a = config_hash("test", &0u64).unwrap();
    assert_eq!(a, config_hash("test", &0u64).unwrap());
    assert_ne!(a, config_hash("test", &1u64).unwrap());
    assert_ne!(a, config_hash("other", &0u64).unwrap());
    assert!(a.starts_with("sha256:") && a.len() == 7 + 64);
    // SHA-256 of "test\n0" (coreutils: printf 'test\n0' | sha256sum).
    assert_eq!(
        a,
        "sha256:fad02bcd5ce2d070eb4483b6f48f20e0dcfd98faab53e7c1d078dc81a029560e"
    );
}

#[test]
fn empty_and_truncated_job_files_are_named_and_nothing_is_written() {
    let root = tempfile::tempdir().unwrap();
    let dirs: Vec<PathBuf> = (0..2)
        .map(|i| {
            shard_dir(
                root.path(),
                &format!("s{i}"),
                Shard::new(i, 2).unwrap(),
                0,
                JOBS,
            )
        })
        .collect();
    let out = root.path().join("out");
    // An empty job file, whatever its format.
    std::fs::write(dirs[1].join("parts/part-0003.txt"), b"").unwrap();
    // The status does not count it as done.
    let st = status(&dirs).unwrap();
    assert_eq!(st[1].damaged_jobs, [3]);
    assert!(!st[1].complete());
    assert!(
        st[1].line().contains("; 1 damaged job file(s)"),
        "{}",
        st[1].line()
    );
    let text = merge(&dirs, &out).unwrap_err().to_string();
    assert!(
        text.contains("parts/part-0003.txt in")
            && text.contains("is empty: delete it and rerun --shard 1/2"),
        "{text}"
    );
    assert!(!out.exists());

    // Parquet job files: a truncated copy has lost its footer.
    let mut m = manifest(Shard::new(0, 1).unwrap(), 0);
    m.job_files.suffix = ".parquet".into();
    m.total_jobs = 2;
    m.total_units = 10;
    let dir = root.path().join("pq");
    std::fs::create_dir_all(dir.join("parts")).unwrap();
    ShardManifest::claim(&dir, Some(&m)).unwrap();
    std::fs::write(dir.join("run.json"), "seed 0").unwrap();
    std::fs::write(dir.join("parts/part-0000.parquet"), b"PAR1 whole file PAR1").unwrap();
    std::fs::write(dir.join("parts/part-0001.parquet"), b"PAR1 cut off he").unwrap();
    let text = merge(std::slice::from_ref(&dir), &out)
        .unwrap_err()
        .to_string();
    assert!(
        text.contains("part-0001.parquet in") && text.contains("is truncated (no PAR1 footer)"),
        "{text}"
    );
    assert!(!text.contains("part-0000"), "{text}");
    assert!(!out.exists());
}

/// A job of several files (a companion written before its job file): the merge copies both and
/// names a finished job whose companion is gone.
#[test]
fn companions_travel_with_their_job_and_a_missing_one_is_named() {
    let root = tempfile::tempdir().unwrap();
    let with_companion = |shard: Shard| {
        let mut m = manifest(shard, 0);
        m.job_files.companions = vec![".dat".into()];
        m
    };
    let dirs: Vec<PathBuf> = (0..2)
        .map(|i| {
            let shard = Shard::new(i, 2).unwrap();
            let dir = root.path().join(format!("s{i}"));
            std::fs::create_dir_all(dir.join("parts")).unwrap();
            let m = with_companion(shard);
            ShardManifest::claim(&dir, Some(&m)).unwrap();
            std::fs::write(dir.join("run.json"), "seed 0").unwrap();
            for j in shard.jobs(JOBS) {
                let files = m.job_files.all_relative(j);
                assert_eq!(files.len(), 2);
                std::fs::write(dir.join(&files[0]), format!("data {j}")).unwrap();
                std::fs::write(dir.join(&files[1]), format!("job {j}")).unwrap();
            }
            dir
        })
        .collect();
    assert_eq!(
        with_companion(Shard::new(0, 2).unwrap())
            .job_files
            .all_relative(3),
        [
            PathBuf::from("parts/part-0003.dat"),
            PathBuf::from("parts/part-0003.txt")
        ]
    );
    let removed = dirs[1].join("parts/part-0005.dat");
    std::fs::rename(&removed, root.path().join("aside")).unwrap();
    let out = root.path().join("merged");
    let text = merge(&dirs, &out).unwrap_err().to_string();
    assert!(
        text.contains("parts/part-0005.dat in")
            && text.contains("is missing: delete parts/part-0005.txt and rerun --shard 1/2"),
        "{text}"
    );
    assert!(!out.exists());
    std::fs::rename(root.path().join("aside"), &removed).unwrap();
    merge(&dirs, &out).unwrap();
    for j in 0..JOBS {
        let data = std::fs::read_to_string(out.join(format!("parts/part-{j:04}.dat"))).unwrap();
        assert_eq!(data, format!("data {j}"));
    }
    assert_eq!(
        std::fs::read_dir(out.join("parts")).unwrap().count(),
        2 * JOBS
    );
}

/// A hand-edited shard.json that no collector writes is refused by name, before any file is
/// listed: a huge width or job count, zero units per job, names leaving the folder.
#[test]
fn manifests_no_collector_writes_are_refused() {
    let root = tempfile::tempdir().unwrap();
    let dir = shard_dir(root.path(), "s", Shard::new(0, 1).unwrap(), 0, JOBS);
    let good = std::fs::read_to_string(dir.join(SHARD_FILE)).unwrap();
    let edits: [(&str, &str, &str); 5] = [
        (
            "\"width\": 4",
            "\"width\": 100000",
            "job_files.width 100000",
        ),
        (
            "\"total_jobs\": 10",
            "\"total_jobs\": 18446744073709551615",
            "total_jobs 18446744073709551615",
        ),
        ("\"units_per_job\": 5", "\"units_per_job\": 0", "do not fit"),
        (
            "\"dir\": \"parts\"",
            "\"dir\": \"../../etc\"",
            "leave the shard folder",
        ),
        (
            "\"prefix\": \"part-\"",
            "\"prefix\": \"../part-\"",
            "leave the shard folder",
        ),
    ];
    for (from, to, needle) in edits {
        assert!(good.contains(from), "{from} not in {good}");
        std::fs::write(dir.join(SHARD_FILE), good.replace(from, to)).unwrap();
        let e = status(std::slice::from_ref(&dir)).unwrap_err();
        assert!(matches!(e, ShardError::NotAShard { .. }), "{to}: {e}");
        assert!(e.to_string().contains(needle), "{to}: {e}");
    }
}

/// `check` reports exactly what `merge` refuses: a shard of another configuration is named, and
/// a healthy set has no problems.
#[test]
fn check_reports_what_merge_refuses() {
    let root = tempfile::tempdir().unwrap();
    let s0 = shard_dir(root.path(), "s0", Shard::new(0, 2).unwrap(), 0, JOBS);
    let s1 = shard_dir(root.path(), "s1", Shard::new(1, 2).unwrap(), 0, JOBS);
    let other = shard_dir(root.path(), "o1", Shard::new(1, 2).unwrap(), 9, JOBS);
    let c = check(&[s0.clone(), other.clone()]).unwrap();
    assert!(c.shards.iter().all(|s| s.complete()));
    assert_eq!(c.problems.len(), 1, "{:?}", c.problems);
    assert!(c.problems[0].contains("o1 (shard 1/2) comes from another configuration"));
    let e = merge(&[s0.clone(), other], &root.path().join("m")).unwrap_err();
    assert!(e.to_string().contains(&c.problems[0]), "{e}");
    assert!(
        check(&[s0.clone(), s1.clone()])
            .unwrap()
            .problems
            .is_empty()
    );
    let missing = check(&[s1]).unwrap().problems;
    assert_eq!(missing.len(), 1, "{missing:?}");
    assert!(
        missing[0].starts_with("shard 0/2 is missing"),
        "{missing:?}"
    );
}

/// An array far larger than its job list (as a mistyped N gives): its empty shards are not
/// required, and when many shards are absent the first 12 are named and the rest counted, so
/// `status` on one shard of 10,000,000 prints a screenful, not gigabytes.
#[test]
fn empty_shards_may_be_left_out_and_absent_shards_are_counted_past_twelve() {
    let root = tempfile::tempdir().unwrap();
    let n = 10_000_000;
    let dirs: Vec<PathBuf> = (0..JOBS)
        .map(|i| {
            shard_dir(
                root.path(),
                &format!("s{i}"),
                Shard::new(i, n).unwrap(),
                0,
                JOBS,
            )
        })
        .collect();
    let whole = shard_dir(root.path(), "whole", Shard::new(0, 1).unwrap(), 0, JOBS);
    assert!(check(&dirs).unwrap().mergeable());
    merge(&dirs, &root.path().join("m")).unwrap();
    merge(&[whole], &root.path().join("w")).unwrap();
    for j in 0..JOBS {
        let file = format!("parts/part-{j:04}.txt");
        assert_eq!(
            std::fs::read(root.path().join("m").join(&file)).unwrap(),
            std::fs::read(root.path().join("w").join(&file)).unwrap()
        );
    }

    let wide = root.path().join("wide");
    let m = ShardManifest {
        total_jobs: 40,
        ..manifest(Shard::new(0, 40).unwrap(), 0)
    };
    std::fs::create_dir_all(wide.join("parts")).unwrap();
    ShardManifest::claim(&wide, Some(&m)).unwrap();
    std::fs::write(wide.join("run.json"), "seed 0").unwrap();
    std::fs::write(wide.join(m.job_files.relative(0)), "job 0").unwrap();
    let c = check(std::slice::from_ref(&wide)).unwrap();
    assert_eq!((c.problems.len(), c.unnamed), (12, 27), "{:?}", c.problems);
    assert!(
        c.problems[11].starts_with("shard 12/40 is missing"),
        "{c:?}"
    );
    assert!(
        c.refusal().ends_with("\n  … and 27 more"),
        "{}",
        c.refusal()
    );
    let e = merge(&[wide], &root.path().join("x")).unwrap_err();
    assert_eq!(
        e.to_string(),
        ShardError::Inconsistent(c.refusal()).to_string()
    );
}

/// A JSON job file cut short (a copy interrupted mid-way) is named in the shard's own folder by
/// `check`, so `status` never calls such a set ready; a whole one passes.
#[test]
fn a_json_job_file_cut_short_is_named_in_its_shard() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("s0");
    let mut m = manifest(Shard::new(0, 1).unwrap(), 0);
    m.job_files.suffix = ".json".into();
    std::fs::create_dir_all(dir.join("parts")).unwrap();
    ShardManifest::claim(&dir, Some(&m)).unwrap();
    std::fs::write(dir.join("run.json"), "seed 0").unwrap();
    for j in 0..JOBS {
        std::fs::write(
            dir.join(m.job_files.relative(j)),
            format!("{{\"job\": {j}}}"),
        )
        .unwrap();
    }
    assert!(check(std::slice::from_ref(&dir)).unwrap().mergeable());
    std::fs::write(dir.join("parts/part-0003.json"), "{\"job\": ").unwrap();
    let c = check(std::slice::from_ref(&dir)).unwrap();
    assert_eq!(c.problems.len(), 1, "{:?}", c.problems);
    assert!(
        c.problems[0].starts_with(&format!(
            "parts/part-0003.json in {} is not complete JSON",
            dir.display()
        )),
        "{:?}",
        c.problems
    );
}

/// The collection's part check sees each job's file in its shard folder with the job's index and
/// the manifest: what it rejects is named there by `check_parts` and `merge_checked`, which then
/// write nothing; the plain `check` does not judge parts.
#[test]
fn a_part_the_collection_rejects_is_named_in_its_shard_and_nothing_is_written() {
    let root = tempfile::tempdir().unwrap();
    let dirs: Vec<PathBuf> = (0..2)
        .map(|i| {
            shard_dir(
                root.path(),
                &format!("s{i}"),
                Shard::new(i, 2).unwrap(),
                0,
                JOBS,
            )
        })
        .collect();
    std::fs::write(dirs[1].join("parts/part-0005.txt"), "job 7").unwrap();
    let seen = std::cell::RefCell::new(Vec::new());
    let part = |m: &ShardManifest, j: usize, path: &Path| {
        assert_eq!(m.collection, "test");
        seen.borrow_mut().push(j);
        let text = std::fs::read_to_string(path).unwrap();
        (text != format!("job {j}")).then(|| format!("holds \"{text}\", not job {j}"))
    };
    assert!(check(&dirs).unwrap().mergeable());
    let c = check_parts(&dirs, &part).unwrap();
    let mut jobs = seen.borrow().clone();
    jobs.sort_unstable();
    assert_eq!(jobs, (0..JOBS).collect::<Vec<_>>());
    assert_eq!(
        c.problems,
        [format!(
            "parts/part-0005.txt in {} holds \"job 7\", not job 5: delete it and rerun --shard 1/2 (it resumes and collects that job again)",
            dirs[1].display()
        )]
    );
    let out = root.path().join("merged");
    let e = merge_checked(&dirs, &out, &part, &|_, _| Ok(())).unwrap_err();
    assert!(matches!(e, ShardError::Inconsistent(_)), "{e}");
    assert!(e.to_string().contains("holds \"job 7\", not job 5"), "{e}");
    assert!(!out.exists());
    std::fs::write(dirs[1].join("parts/part-0005.txt"), "job 5").unwrap();
    merge_checked(&dirs, &out, &part, &|_, _| Ok(())).unwrap();
    assert_eq!(
        std::fs::read_to_string(out.join("parts/part-0005.txt")).unwrap(),
        "job 5"
    );
}

/// An output folder inside a shard folder is refused before anything is written, however it
/// is spelled (a `..` detour, a folder that does not exist yet).
#[test]
fn an_output_inside_a_shard_folder_is_refused() {
    let root = tempfile::tempdir().unwrap();
    let s0 = shard_dir(root.path(), "s0", Shard::new(0, 2).unwrap(), 0, JOBS);
    let s1 = shard_dir(root.path(), "s1", Shard::new(1, 2).unwrap(), 0, JOBS);
    for out in [
        s1.join("merged"),
        s0.join("../s1/new/deeper"),
        s0.join("parts"),
    ] {
        let e = merge(&[s0.clone(), s1.clone()], &out).unwrap_err();
        assert!(
            matches!(e, ShardError::OutputInsideShard { .. }),
            "{}: {e}",
            out.display()
        );
    }
    assert!(!s1.join("merged").exists() && !s1.join("new").exists());
    let sibling = root.path().join("s1-merged");
    merge(&[s0, s1], &sibling).unwrap();
}

/// The finishing step runs on the merged folder before it reaches `out`: what it writes is
/// there, and when it fails nothing is (no temporary folder left either).
#[test]
fn the_finishing_step_runs_before_the_rename_and_its_failure_leaves_nothing() {
    let root = tempfile::tempdir().unwrap();
    let dirs: Vec<PathBuf> = (0..2)
        .map(|i| {
            shard_dir(
                root.path(),
                &format!("s{i}"),
                Shard::new(i, 2).unwrap(),
                0,
                JOBS,
            )
        })
        .collect();
    let out = root.path().join("merged");
    let fail = |m: &ShardManifest, dir: &Path| -> Result<(), roboaudit_shard::FinishError> {
        assert_eq!(m.collection, "test");
        assert!(dir.join("parts/part-0003.txt").is_file());
        Err(format!(
            "{} does not assemble",
            dir.join("parts/part-0003.txt").display()
        )
        .into())
    };
    let e = merge_with(&dirs, &out, &fail).unwrap_err();
    let text = e.to_string();
    assert!(matches!(e, ShardError::Finish { .. }), "{text}");
    // The finishing step's reason is the source, not repeated in the message.
    let reason = std::error::Error::source(&e).map(ToString::to_string);
    assert!(
        reason.is_some_and(|r| r.ends_with("part-0003.txt does not assemble")),
        "{text}"
    );
    assert!(text.contains("nothing was written to"), "{text}");
    assert!(!out.exists());
    let left = std::fs::read_dir(root.path())
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with(".tmp")
        })
        .count();
    assert_eq!(left, 0);
    let assemble = |_: &ShardManifest, dir: &Path| -> Result<(), roboaudit_shard::FinishError> {
        let mut all = String::new();
        for j in 0..JOBS {
            all += &std::fs::read_to_string(dir.join(format!("parts/part-{j:04}.txt")))?;
        }
        std::fs::remove_dir_all(dir.join("parts"))?;
        std::fs::write(dir.join("all.txt"), all)?;
        Ok(())
    };
    merge_with(&dirs, &out, &assemble).unwrap();
    assert!(!out.join("parts").exists());
    assert!(
        std::fs::read_to_string(out.join("all.txt"))
            .unwrap()
            .starts_with("job 0job 1")
    );
}
