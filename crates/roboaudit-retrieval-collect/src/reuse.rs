//! The reuse mechanism's part of a collection (seed 000 §II: Replay, Policy, Policy+DR): which
//! recorded candidates enter the library, how an experience is executed in a scene, and what the
//! run folder's `collect.json` records about it. [`ReplayReuse`] is open-loop replay; learned
//! mechanisms (per-experience image policies) implement [`Reuse`] in the crates above this one.

use crate::error::Result;
use crate::library::{Library, LibraryItem};
use roboaudit_testbed::{CompiledScene, EpisodeConfig, Retarget, execute};

/// How a collection reuses its experiences. Every method is called from the collection's
/// threads; implementations must give the same answers whatever the thread count.
pub trait Reuse: Sync {
    /// Whether candidate `item`, whose recording succeeded in its base scene `base`, enters the
    /// library (e.g. a policy trained on it must reproduce its demonstration there: seed 000
    /// §VII). A rejected candidate counts as a rejected recording.
    ///
    /// # Errors
    /// Whatever preparing the candidate can fail with; it stops the collection.
    fn accept(&self, item: &LibraryItem, base: &CompiledScene) -> Result<bool>;

    /// Executes accepted experience `item` in `scene` with episode settings `cfg`; returns
    /// whether the task succeeded.
    ///
    /// # Errors
    /// Testbed (and mechanism) failures.
    fn execute(
        &self,
        item: &LibraryItem,
        scene: &CompiledScene,
        cfg: &EpisodeConfig,
    ) -> Result<bool>;

    /// What `collect.json` records about the mechanism for `library` under `reuse` (e.g. the
    /// checkpoints' hashes); `None` records nothing (Replay).
    ///
    /// # Errors
    /// Failures reading what is to be recorded.
    fn manifest(&self, library: &Library) -> Result<Option<serde_json::Value>>;

    /// Representations the mechanism adds to `embeddings.parquet` after `pixels32` and
    /// `structural`, from the first images of `library`'s experiences (`experiences`, library
    /// order: each base scene at its recording seed) and of the query scenes (`scenes`, query
    /// order), each a `pixels32` vector (3072 values in `[0, 1]`, 32×32 RGB, row-major from the
    /// top-left, channels interleaved); none by default.
    ///
    /// # Errors
    /// Failures computing them.
    fn representations(
        &self,
        _library: &Library,
        _experiences: &[Vec<f32>],
        _scenes: &[Vec<f32>],
    ) -> Result<Vec<Representation>> {
        Ok(Vec::new())
    }

    /// Entries of the run folder the mechanism writes before `collect.json` exists (a run stopped
    /// then resumes there instead of being refused as someone else's folder); none by default.
    fn own_entries(&self) -> &'static [&'static str] {
        &[]
    }
}

/// A representation added by a reuse mechanism ([`Reuse::representations`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Representation {
    /// Its name in `embeddings.parquet` (e.g. `policy_encoder`).
    pub name: String,
    /// One vector per library experience, in library order.
    pub experiences: Vec<Vec<f32>>,
    /// One vector per query scene, in query order.
    pub scenes: Vec<Vec<f32>>,
}

/// Reuse by Replay: every successful recording is accepted; execution replays the recorded path
/// retargeted by `0` ([`execute`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReplayReuse(pub Retarget);

impl Reuse for ReplayReuse {
    fn accept(&self, _item: &LibraryItem, _base: &CompiledScene) -> Result<bool> {
        Ok(true)
    }

    fn execute(
        &self,
        item: &LibraryItem,
        scene: &CompiledScene,
        cfg: &EpisodeConfig,
    ) -> Result<bool> {
        Ok(execute(&item.experience, scene, cfg, self.0)?)
    }

    fn manifest(&self, _library: &Library) -> Result<Option<serde_json::Value>> {
        Ok(None)
    }
}
