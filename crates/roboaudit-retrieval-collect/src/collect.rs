//! Exhaustive execution into a run folder that `roboaudit retrieval audit --run DIR` reads.

use crate::config::{CollectConfig, Mechanism};
use crate::embed::{Embedder, Embedding, PIXELS32, STRUCTURAL};
use crate::error::{CollectError, Result};
use crate::jobs::{Job, Place};
use crate::library::{Library, record_library_with, recording_seed};
use crate::manifest::{LibraryStats, Manifest, read_config, write_atomic};
use crate::reuse::{ReplayReuse, Reuse};
use crate::scenes::{query_scenes, scene_record};
use crate::shard::{part_count, part_files, part_range, shard_manifest};
use rayon::prelude::*;
use roboaudit_data::{ExecutionLogWriter, read_executions};
use roboaudit_shard::{SHARD_FILE, Shard, ShardManifest};
use roboaudit_testbed::{CompiledScene, EpisodeConfig};
use roboaudit_types::{
    EmbeddingKind, EmbeddingRecord, ExecutionRecord, ExperienceRecord, RecordedAt,
};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Name of the manifest in a run folder.
pub const MANIFEST_FILE: &str = "collect.json";
/// Name of the execution part directory in a run folder.
pub const EXECUTIONS_DIR: &str = "executions";

/// Stages reported to the progress callback.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// Recording the library.
    Library,
    /// Rendering the embeddings.
    Embeddings,
    /// Executions finished so far (including those found on disk) out of the total.
    Executions {
        /// Finished.
        done: usize,
        /// Total of the complete run (of this shard's parts in a sharded run).
        total: usize,
    },
}

/// Options that change how far a run goes and which parts it writes, never the bytes of a file.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RunOptions {
    /// Stop after writing this many parts in this call (a time-boxed or test run; rerun to resume).
    pub max_chunks: Option<usize>,
    /// Write only this shard's parts (part `p` with `p mod N = I`) and a `shard.json`
    /// ([`crate::shard`]); `None` writes every part and no `shard.json`.
    pub shard: Option<Shard>,
}

/// What a call to [`collect`] did.
#[derive(Debug, Clone, PartialEq)]
pub struct CollectOutcome {
    /// The run folder.
    pub dir: PathBuf,
    /// Executions of the complete run (of this shard's parts in a sharded run).
    pub total: usize,
    /// Executions on disk now.
    pub done: usize,
    /// Executions that were already on disk when the call started (resumed from there).
    pub resumed_from: usize,
    /// Whether every execution is on disk (the folder is ready for the audit).
    pub complete: bool,
    /// Library acceptance statistics.
    pub library: LibraryStats,
}

/// Collects (or resumes collecting) `config` into `dir`: `collect.json`, `scenes.csv`,
/// `experiences.csv`, `embeddings.parquet` (`pixels32`, `structural`; [`collect_with`]: then the
/// mechanism's [`Reuse::representations`]), and `executions/`
/// (`part-NNNNNN.parquet`, `config.chunk` rows each, written atomically in job order). Killed at any
/// moment and called again with the same config, it continues after the last complete part; the
/// result is byte-identical to an uninterrupted run. With [`RunOptions::shard`] it writes only that
/// shard's parts, plus `shard.json`; `roboaudit_shard::merge` of all shards gives the unsharded
/// folder byte for byte.
///
/// # Errors
/// [`CollectError::Resume`] when `dir` holds a collection with another config or executions that do
/// not match the job order, or holds another shard or an unsharded run where a shard is asked for
/// (and the reverse); [`CollectError::InvalidConfig`]; library, testbed and data errors.
pub fn collect(
    config: &CollectConfig,
    dir: &Path,
    options: &RunOptions,
    progress: &(dyn Fn(Progress) + Sync),
) -> Result<CollectOutcome> {
    match config.mechanism {
        Mechanism::Replay => collect_with(
            config,
            dir,
            options,
            progress,
            &ReplayReuse(config.mechanism.retarget()),
        ),
        Mechanism::Policy | Mechanism::PolicyDr => Err(CollectError::InvalidConfig(format!(
            "mechanism {0} needs trained policies: collect it with roboaudit_retrieval_learned::reuse (the CLI's `retrieval collect --mechanism {0}`)",
            config.mechanism.name()
        ))),
    }
}

/// [`collect`] with the reuse mechanism `reuse`: it decides which successful recordings enter
/// the library ([`Reuse::accept`]), executes every job ([`Reuse::execute`]) and adds its record
/// to `collect.json` ([`Reuse::manifest`]). Byte-identical resumption and sharding hold as long as
/// `reuse` is deterministic.
///
/// # Errors
/// As [`collect`], and the errors of `reuse`.
pub fn collect_with(
    config: &CollectConfig,
    dir: &Path,
    options: &RunOptions,
    progress: &(dyn Fn(Progress) + Sync),
    reuse: &dyn Reuse,
) -> Result<CollectOutcome> {
    config.check()?;
    std::fs::create_dir_all(dir).map_err(|source| CollectError::Io {
        action: "create",
        path: dir.display().to_string(),
        source,
    })?;
    let manifest_path = dir.join(MANIFEST_FILE);
    let parts_dir = dir.join(EXECUTIONS_DIR);
    match read_config(&manifest_path)? {
        Some(old) if &old != config => {
            return Err(resume_error(
                dir,
                format!(
                    "it was collected with another config ({}); use a new output folder",
                    serde_json::to_string(&old).unwrap_or_default()
                ),
            ));
        }
        None if parts_dir.exists() => {
            return Err(resume_error(
                dir,
                format!("{} exists without {MANIFEST_FILE}", parts_dir.display()),
            ));
        }
        // Never mix a collection into someone else's files (a harness's own scenes.csv would be
        // overwritten and the audit would then pick between two executions sources).
        None if folder_has_entries(dir, reuse.own_entries())? => {
            return Err(CollectError::Occupied {
                path: dir.display().to_string(),
                manifest: MANIFEST_FILE,
            });
        }
        _ => {}
    }
    let sharding = options
        .shard
        .map(|s| shard_manifest(config, s, reuse.own_entries()))
        .transpose()?;
    ShardManifest::claim(dir, sharding.as_ref())?;

    progress(Progress::Library);
    let library = record_library_with(config, reuse)?;
    let queries = query_scenes(config)?;
    let compiled_queries = compile_all(queries.iter().collect())?;
    let compiled_bases = compile_all(library.items.iter().map(|it| &it.base).collect())?;

    write_atomic(
        &manifest_path,
        &serde_json::to_vec_pretty(
            &Manifest::new(config, &library).with_reuse(reuse.manifest(&library)?),
        )
        .map_err(|source| CollectError::Manifest {
            path: manifest_path.display().to_string(),
            source,
        })?,
    )?;
    let scene_records = queries
        .iter()
        .map(scene_record)
        .collect::<Result<Vec<_>>>()?;
    roboaudit_data::write_scenes_csv(dir.join("scenes.csv"), &scene_records)?;
    roboaudit_data::write_experiences_csv(
        dir.join("experiences.csv"),
        &experience_records(&library),
    )?;
    progress(Progress::Embeddings);
    let embeddings = embeddings(config, &library, &compiled_bases, &compiled_queries, reuse)?;
    roboaudit_data::write_embeddings_parquet(dir.join("embeddings.parquet"), &embeddings)?;

    let shard = options.shard.unwrap_or(Shard::WHOLE);
    let parts: Vec<usize> = shard.jobs(part_count(config)).collect();
    let total: usize = parts.iter().map(|&p| part_range(config, p).len()).sum();
    let mut writer = ExecutionLogWriter::open(&parts_dir)?;
    let parts_done = check_existing(config, &library, &queries, dir, &parts)?;
    let resumed_from: usize = parts[..parts_done]
        .iter()
        .map(|&p| part_range(config, p).len())
        .sum();
    let done = AtomicUsize::new(resumed_from);
    progress(Progress::Executions {
        done: resumed_from,
        total,
    });
    let run_job = |j: usize| -> Result<ExecutionRecord> {
        let job = Job::at(config, j);
        let item = &library.items[job.experience];
        let (scene, scene_id) = match job.place {
            Place::Query(s) => (&compiled_queries[s], &queries[s].scene_id),
            Place::OwnBase => (&compiled_bases[job.experience], &item.base.scene_id),
        };
        let cfg = EpisodeConfig {
            seed: job.episode_seed(config.seed),
            ..EpisodeConfig::default()
        };
        let success = reuse.execute(item, scene, &cfg)?;
        let now = done.fetch_add(1, Ordering::Relaxed) + 1;
        progress(Progress::Executions { done: now, total });
        Ok(ExecutionRecord {
            experience_id: item.experience_id.clone(),
            scene_id: scene_id.clone(),
            seed: job.seed as i64,
            success,
        })
    };
    let mut written = resumed_from;
    let mut next = parts_done;
    while next < parts.len() && options.max_chunks.is_none_or(|m| next - parts_done < m) {
        let part = parts[next];
        let rows = part_range(config, part)
            .into_par_iter()
            .map(run_job)
            .collect::<Result<Vec<_>>>()?;
        writer.write_part(part as u64, &rows)?;
        written += rows.len();
        next += 1;
    }
    Ok(CollectOutcome {
        dir: dir.to_path_buf(),
        total,
        done: written,
        resumed_from,
        complete: next == parts.len(),
        library: LibraryStats::of(&library),
    })
}

fn resume_error(dir: &Path, reason: String) -> CollectError {
    CollectError::Resume {
        path: dir.display().to_string(),
        reason,
    }
}

fn compile_all(scenes: Vec<&roboaudit_testbed::Scene>) -> Result<Vec<CompiledScene>> {
    scenes
        .into_par_iter()
        .map(|s| CompiledScene::new(s, 64).map_err(CollectError::from))
        .collect()
}

/// The experiences file: id, base scene, library order as `recorded_at`. Own-base success is left
/// to the audit, which computes it from the own-base executions in the log.
fn experience_records(library: &Library) -> Vec<ExperienceRecord> {
    library
        .items
        .iter()
        .enumerate()
        .map(|(i, it)| ExperienceRecord {
            experience_id: it.experience_id.clone(),
            base_scene_id: Some(it.base.scene_id.clone()),
            recorded_at: Some(RecordedAt::Order(i as i64)),
            own_base_success: None,
        })
        .collect()
}

fn embeddings(
    config: &CollectConfig,
    library: &Library,
    bases: &[CompiledScene],
    queries: &[CompiledScene],
    reuse: &dyn Reuse,
) -> Result<Vec<EmbeddingRecord>> {
    let task = config.task.kind();
    let mut embedder = Embedder::new();
    let mut exp: Vec<(String, Embedding)> = Vec::new();
    for (it, base) in library.items.iter().zip(bases) {
        let seed = recording_seed(config.seed, it.candidate);
        exp.push((it.experience_id.clone(), embedder.embed(base, task, seed)?));
    }
    let mut scn: Vec<(String, Embedding)> = Vec::new();
    for q in queries {
        scn.push((q.scene.scene_id.clone(), embedder.embed(q, task, 0)?));
    }
    let mut out = Vec::with_capacity(2 * (exp.len() + scn.len()));
    for (name, pick) in [
        (
            PIXELS32,
            (|e: &Embedding| e.pixels32.clone()) as fn(&Embedding) -> Vec<f32>,
        ),
        (STRUCTURAL, |e: &Embedding| e.structural.clone()),
    ] {
        for (kind, list) in [
            (EmbeddingKind::Experience, &exp),
            (EmbeddingKind::Scene, &scn),
        ] {
            out.extend(list.iter().map(|(id, e)| EmbeddingRecord {
                representation: name.into(),
                kind,
                id: id.clone(),
                vector: pick(e),
            }));
        }
    }
    let pixels = |list: &[(String, Embedding)]| -> Vec<Vec<f32>> {
        list.iter().map(|(_, e)| e.pixels32.clone()).collect()
    };
    for rep in reuse.representations(library, &pixels(&exp), &pixels(&scn))? {
        for (kind, list, vectors) in [
            (EmbeddingKind::Experience, &exp, rep.experiences),
            (EmbeddingKind::Scene, &scn, rep.scenes),
        ] {
            if vectors.len() != list.len() {
                return Err(CollectError::InvalidConfig(format!(
                    "representation {} has {} vectors for {} {kind:?} ids",
                    rep.name,
                    vectors.len(),
                    list.len()
                )));
            }
            out.extend(
                list.iter()
                    .zip(vectors)
                    .map(|((id, _), vector)| EmbeddingRecord {
                        representation: rep.name.clone(),
                        kind,
                        id: id.clone(),
                        vector,
                    }),
            );
        }
    }
    Ok(out)
}

/// Parts already on disk, checked against this shard's parts (`parts`, ascending) and the job
/// order; returns how many of `parts` are done (always a prefix: parts are written in order).
fn check_existing(
    config: &CollectConfig,
    library: &Library,
    queries: &[roboaudit_testbed::Scene],
    dir: &Path,
    parts: &[usize],
) -> Result<usize> {
    let files = part_files();
    let present = files.present(dir)?;
    if let Some((k, &p)) = present
        .iter()
        .enumerate()
        .find(|&(k, p)| parts.get(k) != Some(p))
    {
        let reason = match parts.get(k) {
            Some(&expected) if parts.contains(&p) => format!(
                "{} exists but {} before it does not (parts are written in order); delete {} and the parts after it, then rerun the same command: they are collected again",
                files.relative(p).display(),
                files.relative(expected).display(),
                files.relative(p).display()
            ),
            _ => format!(
                "{} does not belong to this run's parts (another shard's part, or a part beyond the run)",
                files.relative(p).display()
            ),
        };
        return Err(resume_error(dir, reason));
    }
    for &p in &present {
        let path = dir.join(files.relative(p));
        let rows = read_executions(&path).map_err(|e| {
            resume_error(
                dir,
                format!(
                    "{} cannot be read ({}); delete it and rerun the same command: its executions are collected again",
                    files.relative(p).display(),
                    roboaudit_types::error_chain(&e)
                ),
            )
        })?;
        let range = part_range(config, p);
        if rows.len() != range.len() {
            return Err(resume_error(
                dir,
                format!(
                    "{} holds {} executions, expected {} ({} per part)",
                    path.display(),
                    rows.len(),
                    range.len(),
                    config.chunk
                ),
            ));
        }
        for (j, row) in range.zip(&rows) {
            let job = Job::at(config, j);
            let item = &library.items[job.experience];
            let scene_id = match job.place {
                Place::Query(s) => &queries[s].scene_id,
                Place::OwnBase => &item.base.scene_id,
            };
            if row.experience_id != item.experience_id
                || &row.scene_id != scene_id
                || row.seed != job.seed as i64
            {
                return Err(resume_error(
                    dir,
                    format!(
                        "execution {} is ({}, {}, {}), expected ({}, {scene_id}, {})",
                        j + 1,
                        row.experience_id,
                        row.scene_id,
                        row.seed,
                        item.experience_id,
                        job.seed
                    ),
                ));
            }
        }
    }
    Ok(present.len())
}

/// Whether `dir` holds any entry other than a temporary file left by a write killed before its
/// rename (`.tmp-*`, which a killed first run can leave before `collect.json` exists) and a shard
/// manifest (written before `collect.json`; checked on its own).
/// Whether `dir` holds anything but temporary files, a shard manifest and `own` (what the reuse
/// mechanism writes before `collect.json`, e.g. trained policies of a run stopped while training).
fn folder_has_entries(dir: &Path, own: &[&str]) -> Result<bool> {
    let entries = std::fs::read_dir(dir).map_err(|source| CollectError::Io {
        action: "list",
        path: dir.display().to_string(),
        source,
    })?;
    Ok(entries.filter_map(std::result::Result::ok).any(|e| {
        let name = e.file_name();
        let name = name.to_string_lossy();
        !name.starts_with(".tmp-") && name != SHARD_FILE && !own.contains(&name.as_ref())
    }))
}
