//! `memory natural --shard I/N` and `roboaudit merge`: the merged shards are the unsharded
//! study's natural.json and natural.md, byte for byte, for any N; a lost episode is named.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::{roboaudit, text};
use std::path::{Path, PathBuf};

const EPISODES: usize = 5;

/// A natural study of the bank policy on put_back (its recall draws are seeded per query, so a
/// shard that ran its episodes in another process order would show).
fn natural(out: &Path, extra: &[&str]) -> std::process::Output {
    let episodes = EPISODES.to_string();
    let mut args = vec![
        "memory",
        "natural",
        "--policy",
        "bank",
        "--episodes",
        episodes.as_str(),
        "--resamples",
        "200",
        "--out",
    ];
    args.push(out.to_str().unwrap());
    args.extend_from_slice(extra);
    roboaudit(&args)
}

fn merge(dirs: &[PathBuf], out: &Path) -> std::process::Output {
    let mut args = vec!["merge".to_owned()];
    args.extend(dirs.iter().map(|d| d.to_str().unwrap().to_owned()));
    args.extend(["--out".to_owned(), out.to_str().unwrap().to_owned()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    roboaudit(&args)
}

fn shards(root: &Path, name: &str, n: usize) -> Vec<PathBuf> {
    (0..n)
        .map(|i| {
            let d = root.join(format!("{name}-{i}"));
            let spec = format!("{i}/{n}");
            let o = natural(&d, &["--shard", spec.as_str()]);
            assert!(o.status.success(), "{spec}: {}", text(&o));
            let owned = (0..EPISODES).filter(|e| e % n == i).count();
            assert!(
                text(&o).contains(&format!("shard {spec}: {owned} of {EPISODES} episodes")),
                "{spec}: {}",
                text(&o)
            );
            assert!(!d.join("natural.json").exists());
            d
        })
        .collect()
}

#[test]
fn merged_shards_equal_the_unsharded_study() {
    let tmp = tempfile::tempdir().unwrap();
    let whole = tmp.path().join("whole");
    let o = natural(&whole, &[]);
    assert!(o.status.success(), "{}", text(&o));
    for n in [1usize, 2, 3] {
        let dirs = shards(tmp.path(), &format!("n{n}"), n);
        let merged = tmp.path().join(format!("merged-{n}"));
        let o = merge(&dirs, &merged);
        assert!(o.status.success(), "N = {n}: {}", text(&o));
        assert!(
            text(&o).contains(&format!(
                "assembled {}",
                merged.join("natural.json").display()
            )),
            "{}",
            text(&o)
        );
        for f in ["natural.json", "natural.md"] {
            assert_eq!(
                std::fs::read(merged.join(f)).unwrap(),
                std::fs::read(whole.join(f)).unwrap(),
                "N = {n}: {f}"
            );
        }
        let mut names: Vec<String> = std::fs::read_dir(&merged)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        assert_eq!(names, ["natural.json", "natural.md"], "N = {n}");
    }
}

#[test]
fn a_lost_episode_is_named_and_a_rerun_of_its_shard_restores_it() {
    let tmp = tempfile::tempdir().unwrap();
    let dirs = shards(tmp.path(), "s", 2);
    let lost = dirs[1].join("natural.partial/episode-000003.json");
    let kept = std::fs::read(&lost).unwrap();
    std::fs::remove_file(&lost).unwrap();
    let o = merge(&dirs, &tmp.path().join("refused"));
    assert_ne!(o.status.code(), Some(0), "{}", text(&o));
    assert!(text(&o).contains("episode-000003.json"), "{}", text(&o));
    assert!(!tmp.path().join("refused/natural.json").exists());
    let o = natural(&dirs[1], &["--shard", "1/2"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("(1 resumed)"), "{}", text(&o));
    assert_eq!(std::fs::read(&lost).unwrap(), kept);
    // A damaged part (cut short) is not kept: the rerun of its shard runs the episode again.
    std::fs::write(&lost, b"{\"index\":").unwrap();
    let o = natural(&dirs[1], &["--shard", "1/2"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("(1 resumed)"), "{}", text(&o));
    assert_eq!(std::fs::read(&lost).unwrap(), kept);
    // An unsharded run into a shard's folder is refused: its result would land among the parts.
    let o = natural(&dirs[0], &[]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(
        text(&o).contains("resume it with --shard 0/2"),
        "{}",
        text(&o)
    );
    assert!(!dirs[0].join("natural.json").exists());
}

/// A part that is complete JSON but not an episode's part (another unit's, or another type) is
/// refused by `status` and `merge` alike, naming the file in its shard folder, not a copy in the
/// merge's temporary folder.
#[test]
fn a_part_of_another_type_or_episode_is_refused_in_its_shard_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let dirs = shards(tmp.path(), "s", 2);
    let part = dirs[1].join("natural.partial/episode-000003.json");
    let kept = std::fs::read(&part).unwrap();
    let other = std::fs::read(dirs[1].join("natural.partial/episode-000001.json")).unwrap();
    for (bytes, why) in [
        (
            b"{\"rows\": []}".to_vec(),
            "is not an episode's part (missing field",
        ),
        (other, "holds episode 1, not 3"),
    ] {
        std::fs::write(&part, &bytes).unwrap();
        let mut args = vec!["status".to_owned()];
        args.extend(dirs.iter().map(|d| d.to_str().unwrap().to_owned()));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = roboaudit(&args);
        assert!(o.status.success(), "{}", text(&o));
        let expected = format!("{} {why}", dirs[1].display());
        assert!(text(&o).contains("not mergeable"), "{}", text(&o));
        assert!(text(&o).contains(&expected), "{}", text(&o));
        let out = tmp.path().join("refused");
        let o = merge(&dirs, &out);
        assert_eq!(o.status.code(), Some(3), "{}", text(&o));
        assert!(text(&o).contains(&expected), "{}", text(&o));
        assert!(
            text(&o).contains("delete it and rerun --shard 1/2"),
            "{}",
            text(&o)
        );
        assert!(!text(&o).contains(".tmp-merge-"), "{}", text(&o));
        assert!(!out.exists());
    }
    // The part now holds episode 1: a rerun of its shard runs episode 3 again, keeping episode 1.
    let o = natural(&dirs[1], &["--shard", "1/2"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("(1 resumed)"), "{}", text(&o));
    assert_eq!(std::fs::read(&part).unwrap(), kept);
    let o = merge(&dirs, &tmp.path().join("merged"));
    assert!(o.status.success(), "{}", text(&o));
}

/// A new shard is refused a folder that holds files no shard writes (here a finished study), and
/// leaves nothing there.
#[test]
fn a_shard_is_refused_a_folder_holding_a_finished_study() {
    let tmp = tempfile::tempdir().unwrap();
    let whole = tmp.path().join("whole");
    let o = natural(&whole, &[]);
    assert!(o.status.success(), "{}", text(&o));
    let o = natural(&whole, &["--shard", "0/2"]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(
        text(&o).contains("it holds natural.json and 1 more, which no shard of this study writes"),
        "{}",
        text(&o)
    );
    assert!(!whole.join("natural.partial").exists());
    assert!(!whole.join("shard.json").exists());
}
