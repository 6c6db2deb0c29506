//! Progress across shard folders, and their merge into one run folder.

use crate::error::{Result, ShardError};
use crate::manifest::ShardManifest;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Problems listed by name in one refusal; the rest are counted.
const NAMED: usize = 12;

/// What one shard folder holds, from the files on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShardStatus {
    /// The folder.
    pub dir: PathBuf,
    /// Its shard manifest.
    pub manifest: ShardManifest,
    /// Jobs the shard owns.
    pub owned_jobs: usize,
    /// Owned jobs whose files exist, ascending.
    pub done_jobs: Vec<usize>,
    /// Of `done_jobs`, those whose job file is empty or cut short (it exists but is not done:
    /// [`merge`] names it and says to delete it), ascending.
    pub damaged_jobs: Vec<usize>,
    /// Job files present that the shard does not own (a copy or another shard's file), ascending.
    pub stray_jobs: Vec<usize>,
    /// Units of work (e.g. executions) the shard owns.
    pub owned_units: usize,
    /// Units of work in its done jobs, damaged ones left out.
    pub done_units: usize,
}

impl ShardStatus {
    /// Whether every owned job's file exists and none is damaged.
    pub fn complete(&self) -> bool {
        self.done_jobs.len() - self.damaged_jobs.len() == self.owned_jobs
    }
}

/// Jobs done per shard folder, from the files on disk (no collector needed).
///
/// # Errors
/// [`ShardError::NotAShard`] for a folder without `shard.json`; I/O and manifest errors.
pub fn status(dirs: &[PathBuf]) -> Result<Vec<ShardStatus>> {
    dirs.iter().map(|d| status_of(d)).collect()
}

fn status_of(dir: &Path) -> Result<ShardStatus> {
    if !dir.is_dir() {
        return Err(ShardError::NotAShard {
            path: dir.display().to_string(),
            reason: if dir.exists() {
                "a file, not a shard folder".into()
            } else {
                "no such folder".into()
            },
        });
    }
    let manifest = ShardManifest::read(dir)?.ok_or_else(|| ShardError::NotAShard {
        path: dir.display().to_string(),
        reason: format!(
            "no {} here: not a shard folder (a sharded collection writes one per shard; a shard that has not started yet has none)",
            crate::SHARD_FILE
        ),
    })?;
    let shard = manifest.shard;
    let (done_jobs, stray_jobs): (Vec<usize>, Vec<usize>) = manifest
        .job_files
        .present(dir)?
        .into_iter()
        .partition(|&j| shard.owns(j) && j < manifest.total_jobs);
    let owned_units = shard
        .jobs(manifest.total_jobs)
        .map(|j| manifest.units_of(j))
        .sum();
    let mut damaged_jobs = Vec::new();
    for &j in &done_jobs {
        if damage(&dir.join(manifest.job_files.relative(j)))?.is_some() {
            damaged_jobs.push(j);
        }
    }
    let done_units = done_jobs
        .iter()
        .filter(|j| damaged_jobs.binary_search(j).is_err())
        .map(|&j| manifest.units_of(j))
        .sum();
    Ok(ShardStatus {
        dir: dir.to_path_buf(),
        owned_jobs: shard.job_count(manifest.total_jobs),
        manifest,
        done_jobs,
        damaged_jobs,
        stray_jobs,
        owned_units,
        done_units,
    })
}

/// What [`merge`] wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MergeOutcome {
    /// The merged run folder.
    pub out: PathBuf,
    /// Each shard folder's status, in the order given.
    pub shards: Vec<ShardStatus>,
    /// Job files copied.
    pub jobs: usize,
    /// Shared files copied.
    pub shared: usize,
}

/// What [`check`] found in a set of shard folders.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Check {
    /// Each folder's status, in the order given.
    pub shards: Vec<ShardStatus>,
    /// The first reasons (at most 12) [`merge`] would refuse these folders (the folder, shard or
    /// job at fault, and the remedy); empty when they merge.
    pub problems: Vec<String>,
    /// Further reasons, counted but not written out (a half-started array of thousands of shards
    /// would otherwise name every absent shard).
    pub unnamed: usize,
}

impl Check {
    /// Whether [`merge`] accepts these folders.
    #[must_use]
    pub fn mergeable(&self) -> bool {
        self.problems.is_empty()
    }

    /// The reasons, one per line after a line break, each indented by two spaces, ending with
    /// `… and K more` when some are counted only; empty when mergeable.
    #[must_use]
    pub fn refusal(&self) -> String {
        let mut message: String = self.problems.iter().map(|p| format!("\n  {p}")).collect();
        if self.unnamed > 0 {
            message.push_str(&format!("\n  … and {} more", self.unnamed));
        }
        message
    }
}

/// Reasons to refuse a merge: the first [`NAMED`] kept, the rest counted. A reason is a closure so
/// that counted ones are never formatted.
#[derive(Default)]
struct Problems {
    named: Vec<String>,
    unnamed: usize,
}

impl Problems {
    fn add(&mut self, reason: impl FnOnce() -> String) {
        if self.named.len() < NAMED {
            self.named.push(reason());
        } else {
            self.unnamed += 1;
        }
    }

    fn is_empty(&self) -> bool {
        self.named.is_empty()
    }
}

/// A collection's judgement of one of its job files, `part(manifest, job, path)`: `path` is the
/// marker file of job `job` of the collection `manifest` describes (e.g. one recipient's JSON part) in a shard's own folder, already known to be
/// complete JSON or Parquet; the answer is `None` when it reads as that job's part of the
/// collection, else why not (e.g. `is not a recipient part of an intervention study: missing
/// field `index``). Judged before anything is merged, so the refusal names the shard's file, the
/// one a user can delete, not a copy in the temporary merge folder.
pub type PartCheck<'a> = dyn Fn(&ShardManifest, usize, &Path) -> Option<String> + 'a;

/// [`check_parts`] for a collection whose job files need no judgement beyond being intact.
///
/// # Errors
/// As [`check_parts`].
pub fn check(dirs: &[PathBuf]) -> Result<Check> {
    check_parts(dirs, &|_, _, _| None)
}

/// The checks of [`merge_checked`] without writing anything: one configuration hash and shard
/// count, every shard `0..N` that owns a job given once (shards that own none may be left out),
/// every job file present in exactly the shard that owns it, intact and accepted by `part`, the
/// shared files identical across shards. `roboaudit status` reports these with the same `part`
/// as `roboaudit merge`, so a set of folders it calls mergeable is one the merge accepts.
///
/// # Errors
/// [`ShardError::NotAShard`] for a folder that is not a shard folder; I/O errors.
pub fn check_parts(dirs: &[PathBuf], part: &PartCheck<'_>) -> Result<Check> {
    let shards = status(dirs)?;
    let mut problems = Problems::default();
    let Some(first) = shards.first() else {
        problems.add(|| "no shard folders given".into());
        return Ok(Check {
            shards,
            problems: problems.named,
            unnamed: 0,
        });
    };
    let reference = first.manifest.clone();
    check_configuration(&shards, &mut problems);
    if problems.is_empty() {
        check_shards_and_jobs(&shards, &reference, &mut problems);
    }
    if problems.is_empty() {
        check_intact(&shards, &reference, part, &mut problems)?;
    }
    if problems.is_empty() {
        check_shared(&shards, &reference, &mut problems)?;
    }
    Ok(Check {
        shards,
        problems: problems.named,
        unnamed: problems.unnamed,
    })
}

/// A collection's error from its finishing step.
pub type FinishError = Box<dyn std::error::Error + Send + Sync>;

/// A collection's last merge step, `finish(manifest, merged)`: turns the merged job and shared
/// files in the folder `merged` into exactly what an unsharded run of the same configuration
/// leaves there (e.g. assembles records from per-job parts and removes the parts). It runs on a
/// temporary sibling of the output folder, so when it fails nothing reaches the output folder.
pub type Finish<'a> = dyn Fn(&ShardManifest, &Path) -> std::result::Result<(), FinishError> + 'a;

/// [`merge_with`] for a collection whose merged job and shared files are already its run folder
/// (e.g. `retrieval collect`'s executions parts).
///
/// # Errors
/// As [`merge_with`].
pub fn merge(dirs: &[PathBuf], out: &Path) -> Result<MergeOutcome> {
    merge_with(dirs, out, &|_, _| Ok(()))
}

/// Merges complete shard folders of one collection into `out`, which then holds what an unsharded
/// run of the same configuration holds, byte for byte (shared files once, every job file once; no
/// `shard.json`), after `finish` (see [`Finish`]) has run on it. Checks first, all before anything
/// is written ([`check`]); `out` is written as a temporary sibling folder, finished, and renamed
/// into place, so a failed merge leaves nothing there.
///
/// # Errors
/// [`ShardError::Inconsistent`] listing every problem found (the folder, shard or job, and the
/// shard that should hold a missing job); [`ShardError::OutputExists`] when `out` is a non-empty
/// folder; [`ShardError::OutputInsideShard`] when `out` lies inside a shard folder;
/// [`ShardError::Finish`] when `finish` fails; [`ShardError::NotAShard`]; I/O errors.
pub fn merge_with(dirs: &[PathBuf], out: &Path, finish: &Finish<'_>) -> Result<MergeOutcome> {
    merge_checked(dirs, out, &|_, _, _| None, finish)
}

/// [`merge_with`] whose checks also judge every job file with the collection's `part`
/// ([`PartCheck`]), so a file the finishing step could not read is refused in its shard folder.
///
/// # Errors
/// As [`merge_with`]; a job file `part` rejects is listed in [`ShardError::Inconsistent`].
pub fn merge_checked(
    dirs: &[PathBuf],
    out: &Path,
    part: &PartCheck<'_>,
    finish: &Finish<'_>,
) -> Result<MergeOutcome> {
    let checked = check_parts(dirs, part)?;
    if !checked.mergeable() {
        return Err(ShardError::Inconsistent(checked.refusal()));
    }
    let shards = checked.shards;
    refuse_out_inside(&shards, out)?;
    let reference = shards[0].manifest.clone();
    write_merged(&shards, &reference, out, finish)?;
    Ok(MergeOutcome {
        out: out.to_path_buf(),
        jobs: reference.total_jobs,
        shared: reference.shared_files.len(),
        shards,
    })
}

/// `path` made absolute with symbolic links resolved, for a path that may not exist yet: its
/// nearest existing ancestor is resolved and the rest appended.
fn resolved(path: &Path) -> Result<PathBuf> {
    let abs = std::path::absolute(path).map_err(ShardError::io("resolve", path))?;
    let mut rest = Vec::new();
    let mut at = abs.as_path();
    loop {
        if let Ok(real) = at.canonicalize() {
            return Ok(rest.iter().rev().fold(real, |p, c| p.join(c)));
        }
        match (at.parent(), at.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_owned());
                at = parent;
            }
            _ => return Ok(abs),
        }
    }
}

/// Refuses an output folder inside a shard folder: the merged run would then sit among the
/// shard's own files (and be copied into the next merge of a folder that contains it).
fn refuse_out_inside(shards: &[ShardStatus], out: &Path) -> Result<()> {
    let target = resolved(out)?;
    for s in shards {
        let dir = resolved(&s.dir)?;
        if target.starts_with(&dir) {
            return Err(ShardError::OutputInsideShard {
                out: out.display().to_string(),
                shard: s.dir.display().to_string(),
            });
        }
    }
    Ok(())
}

/// Parquet's magic bytes, at the start and at the very end of every complete file.
const PARQUET_MAGIC: &[u8; 4] = b"PAR1";

/// Why a job file cannot be a complete one, from its size and, for Parquet, its first and last
/// four bytes (a truncated copy loses the footer): `None` when it looks whole. Decoding the
/// file is the collector's job; this catches the damage a copy or a full disk leaves.
fn damage(path: &Path) -> Result<Option<&'static str>> {
    use std::io::{Read, Seek, SeekFrom};
    let mut f = std::fs::File::open(path).map_err(ShardError::io("open", path))?;
    let len = f.metadata().map_err(ShardError::io("inspect", path))?.len();
    if len == 0 {
        return Ok(Some("is empty"));
    }
    if path.extension().is_some_and(|e| e == "json") {
        // A recipient or rollout block: a copy cut short must be refused here, naming the
        // shard's own file, not later by the finishing step in the temporary merge folder.
        let reader = std::io::BufReader::new(f);
        return Ok(serde_json::from_reader::<_, serde::de::IgnoredAny>(reader)
            .err()
            .map(|_| "is not complete JSON (cut short or damaged)"));
    }
    if path.extension().is_none_or(|e| e != "parquet") {
        return Ok(None);
    }
    if len < 8 {
        return Ok(Some("is too short to be Parquet"));
    }
    let (mut head, mut tail) = ([0u8; 4], [0u8; 4]);
    f.read_exact(&mut head)
        .map_err(ShardError::io("read", path))?;
    f.seek(SeekFrom::End(-4))
        .map_err(ShardError::io("read", path))?;
    f.read_exact(&mut tail)
        .map_err(ShardError::io("read", path))?;
    Ok(if &head != PARQUET_MAGIC {
        Some("is not Parquet (no PAR1 header)")
    } else if &tail != PARQUET_MAGIC {
        Some("is truncated (no PAR1 footer)")
    } else {
        None
    })
}

fn check_intact(
    shards: &[ShardStatus],
    reference: &ShardManifest,
    part: &PartCheck<'_>,
    problems: &mut Problems,
) -> Result<()> {
    for s in shards {
        for &j in &s.done_jobs {
            let marker = reference.job_files.relative(j);
            for file in reference.job_files.all_relative(j) {
                let path = s.dir.join(&file);
                let why = if path.is_file() {
                    match damage(&path)? {
                        None if file == marker => part(reference, j, &path),
                        why => why.map(str::to_owned),
                    }
                } else {
                    Some("is missing".to_owned())
                };
                if let Some(why) = why {
                    let delete = if file == marker {
                        "it".to_owned()
                    } else {
                        marker.display().to_string()
                    };
                    problems.add(|| format!(
                        "{} in {} {why}: delete {delete} and rerun --shard {} (it resumes and collects that job again)",
                        file.display(),
                        s.dir.display(),
                        s.manifest.shard
                    ));
                }
            }
        }
    }
    Ok(())
}

fn check_configuration(shards: &[ShardStatus], problems: &mut Problems) {
    let first = &shards[0];
    let r = &first.manifest;
    for s in &shards[1..] {
        let m = &s.manifest;
        if m.collection != r.collection {
            problems.add(|| format!(
                "{} (shard {}) is a shard of a {} collection, while {} (shard {}) is of a {} collection: one merge takes the shards of one collection",
                s.dir.display(),
                m.shard,
                m.collection,
                first.dir.display(),
                r.shard,
                r.collection
            ));
        } else if m.config_hash != r.config_hash {
            problems.add(|| format!(
                "{} (shard {}) comes from another configuration: {} {}, while {} (shard {}) has {} {}",
                s.dir.display(),
                m.shard,
                m.collection,
                m.config_hash,
                first.dir.display(),
                r.shard,
                r.collection,
                r.config_hash
            ));
        } else if m.shard.count != r.shard.count {
            problems.add(|| format!(
                "{} is shard {} but {} is shard {}: the shards of one merge come from one array of N",
                s.dir.display(),
                m.shard,
                first.dir.display(),
                r.shard
            ));
        } else if *m
            != (ShardManifest {
                shard: m.shard,
                ..r.clone()
            })
        {
            problems.add(|| format!(
                "{} has the configuration hash of {} but another job layout (a different roboaudit version?)",
                s.dir.display(),
                first.dir.display()
            ));
        }
    }
}

fn check_shards_and_jobs(
    shards: &[ShardStatus],
    reference: &ShardManifest,
    problems: &mut Problems,
) {
    let n = reference.shard.count;
    let mut by_index: BTreeMap<usize, Vec<&ShardStatus>> = BTreeMap::new();
    for s in shards {
        by_index.entry(s.manifest.shard.index).or_default().push(s);
    }
    for (index, given) in &by_index {
        if given.len() > 1 {
            let dirs: Vec<String> = given.iter().map(|s| s.dir.display().to_string()).collect();
            problems.add(|| {
                format!(
                    "shard {index}/{n} is given {} times: {}",
                    given.len(),
                    dirs.join(", ")
                )
            });
        }
    }
    // Shard i owns jobs i, i + N, …: one at or past the job count owns none, and an array larger
    // than the job list need not run (or be given) its empty shards.
    let owning = n.min(reference.total_jobs);
    for index in (0..owning).filter(|i| !by_index.contains_key(i)) {
        let shard = crate::Shard { index, count: n };
        problems.add(|| {
            let jobs: Vec<usize> = shard.jobs(reference.total_jobs).collect();
            format!(
                "shard {shard} is missing (its folder was not given): it holds {} job(s){}; run it with --shard {shard}",
                jobs.len(),
                name_jobs(reference, &jobs)
            )
        });
    }
    if !problems.is_empty() {
        return;
    }
    let mut holders: Vec<Vec<&ShardStatus>> = vec![Vec::new(); reference.total_jobs];
    for s in shards {
        for &j in s.done_jobs.iter().chain(&s.stray_jobs) {
            match holders.get_mut(j) {
                Some(h) => h.push(s),
                None => problems.add(|| {
                    format!(
                        "{} holds {}, beyond the collection's {} jobs",
                        s.dir.display(),
                        reference.job_files.relative(j).display(),
                        reference.total_jobs
                    )
                }),
            }
        }
    }
    for (j, h) in holders.iter().enumerate() {
        let owner = crate::Shard {
            index: j % n,
            count: n,
        };
        let file = reference.job_files.relative(j);
        if h.len() > 1 || (h.len() == 1 && h[0].manifest.shard != owner) {
            let places: Vec<String> = h
                .iter()
                .map(|s| format!("{} (shard {})", s.dir.display(), s.manifest.shard))
                .collect();
            problems.add(|| {
                format!(
                    "job {j} ({}) is duplicated: present in {}; it belongs to shard {owner} only",
                    file.display(),
                    places.join(", ")
                )
            });
        }
    }
    for s in shards {
        let missing: Vec<usize> = s
            .manifest
            .shard
            .jobs(reference.total_jobs)
            .filter(|j| s.done_jobs.binary_search(j).is_err())
            .collect();
        if !missing.is_empty() {
            problems.add(|| format!(
                "shard {} ({}) lacks {} of its {} jobs{}: it is unfinished; rerun it with --shard {} (it resumes)",
                s.manifest.shard,
                s.dir.display(),
                missing.len(),
                s.owned_jobs,
                name_jobs(reference, &missing),
                s.manifest.shard
            ));
        }
    }
}

/// ` (job 3: executions/part-000003.parquet, …)` for the first few of `jobs`.
fn name_jobs(reference: &ShardManifest, jobs: &[usize]) -> String {
    if jobs.is_empty() {
        return String::new();
    }
    let shown: Vec<String> = jobs
        .iter()
        .take(5)
        .map(|&j| format!("job {j}: {}", reference.job_files.relative(j).display()))
        .collect();
    let more = if jobs.len() > 5 { ", …" } else { "" };
    format!(" ({}{more})", shown.join(", "))
}

/// The files of shared entry `name` in shard folder `dir`, relative and `/`-separated, sorted:
/// `name` itself, or every file under the folder `name/` (none when it does not exist).
fn shared_entry_files(dir: &Path, name: &str) -> Result<Vec<String>> {
    let Some(folder) = name.strip_suffix('/') else {
        return Ok(vec![name.to_owned()]);
    };
    let mut files = Vec::new();
    let mut pending = vec![folder.to_owned()];
    while let Some(rel) = pending.pop() {
        let path = dir.join(&rel);
        let entries = match std::fs::read_dir(&path) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(ShardError::io("list", &path)(e)),
        };
        for entry in entries {
            let entry = entry.map_err(ShardError::io("list", &path))?;
            let child = format!("{rel}/{}", entry.file_name().to_string_lossy());
            let kind = entry.file_type().map_err(ShardError::io("list", &path))?;
            if kind.is_dir() {
                pending.push(child);
            } else {
                files.push(child);
            }
        }
    }
    files.sort();
    Ok(files)
}

fn check_shared(
    shards: &[ShardStatus],
    reference: &ShardManifest,
    problems: &mut Problems,
) -> Result<()> {
    // A shared folder must hold the same files in every shard; its files are then checked as
    // shared files themselves.
    let mut names: Vec<String> = Vec::new();
    for name in &reference.shared_files {
        if !name.ends_with('/') {
            names.push(name.clone());
            continue;
        }
        let mut first: Option<(&Path, Vec<String>)> = None;
        for s in shards {
            let files = shared_entry_files(&s.dir, name)?;
            match &first {
                None => first = Some((&s.dir, files)),
                Some((d, f)) if *f != files => problems.add(|| {
                    format!(
                        "{name} holds other files in {} than in {} ({} against {})",
                        s.dir.display(),
                        d.display(),
                        files.len(),
                        f.len()
                    )
                }),
                Some(_) => {}
            }
        }
        match first {
            Some((_, files)) if !files.is_empty() => names.extend(files),
            _ => problems
                .add(|| format!("every shard lacks {name}: the shards have not started writing")),
        }
    }
    for name in &names {
        let mut first: Option<(&Path, Vec<u8>)> = None;
        for s in shards {
            let path = s.dir.join(name);
            let bytes = match std::fs::read(&path) {
                Ok(b) => b,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    problems.add(|| format!(
                        "{} lacks {name}: the shard has not started writing; rerun it with --shard {}",
                        s.dir.display(),
                        s.manifest.shard
                    ));
                    continue;
                }
                Err(e) => return Err(ShardError::io("read", &path)(e)),
            };
            match &first {
                None => first = Some((&s.dir, bytes)),
                Some((d, b)) if *b != bytes => problems.add(|| format!(
                    "{name} differs between {} and {} although the configuration hash is the same (different roboaudit or MuJoCo versions?)",
                    d.display(),
                    s.dir.display()
                )),
                Some(_) => {}
            }
        }
    }
    Ok(())
}

fn write_merged(
    shards: &[ShardStatus],
    reference: &ShardManifest,
    out: &Path,
    finish: &Finish<'_>,
) -> Result<()> {
    let out_exists = match std::fs::read_dir(out) {
        Ok(mut entries) => {
            if entries.next().is_some() {
                return Err(ShardError::OutputExists(out.display().to_string()));
            }
            true
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
        Err(e) => return Err(ShardError::io("list", out)(e)),
    };
    let parent = out
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent).map_err(ShardError::io("create", parent))?;
    let tmp = tempfile::Builder::new()
        .prefix(".tmp-merge-")
        // Renamed into place as the merged run: the mode of a folder the user creates.
        .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o777))
        .tempdir_in(parent)
        .map_err(ShardError::io("create a temporary folder in", parent))?;
    let copy = |from: &Path, rel: &Path| -> Result<()> {
        let to = tmp.path().join(rel);
        if let Some(d) = to.parent() {
            std::fs::create_dir_all(d).map_err(ShardError::io("create", d))?;
        }
        std::fs::copy(from, &to).map_err(ShardError::io("copy", from))?;
        Ok(())
    };
    for entry in &reference.shared_files {
        for name in shared_entry_files(&shards[0].dir, entry)? {
            copy(&shards[0].dir.join(&name), Path::new(&name))?;
        }
    }
    for s in shards {
        for &j in &s.done_jobs {
            for rel in reference.job_files.all_relative(j) {
                copy(&s.dir.join(&rel), &rel)?;
            }
        }
    }
    finish(reference, tmp.path()).map_err(|source| ShardError::Finish {
        collection: reference.collection.clone(),
        out: out.display().to_string(),
        source,
    })?;
    if out_exists {
        std::fs::remove_dir(out).map_err(ShardError::io("replace the empty folder", out))?;
    }
    let tmp = tmp.keep();
    std::fs::rename(&tmp, out).map_err(|e| {
        let _ = std::fs::remove_dir_all(&tmp);
        ShardError::io("rename the merged folder onto", out)(e)
    })?;
    Ok(())
}
