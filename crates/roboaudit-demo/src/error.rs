//! The one error type of the demo.

use std::path::PathBuf;

/// Why the demo stopped. The variants that wrap a pipeline's own request error keep it whole,
/// so that a caller maps it as it maps that pipeline's command (exit codes included).
#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    /// `--out` holds a demo of another scale, whose runs cannot be reused.
    #[error("{0}")]
    Usage(String),
    /// A retrieval collection failed.
    #[error("collecting the {task} run")]
    RetrievalCollect {
        /// The task and mechanism (`stack`, `door`, `stack (policy)`).
        task: String,
        /// The collection's error (boxed, as the audit's and the fit's: they are large).
        #[source]
        source: Box<roboaudit_retrieval_collect::request::RequestError>,
    },
    /// A retrieval audit failed.
    #[error("auditing the {task} run")]
    RetrievalAudit {
        /// The task and mechanism (`stack`, `door`, `stack (policy)`).
        task: String,
        /// The audit's error.
        #[source]
        source: Box<roboaudit_retrieval::request::RequestError>,
    },
    /// A memory collection, audit or control failed.
    #[error(transparent)]
    Memory(#[from] roboaudit_memory_harness::request::RequestError),
    /// The learned memory policy could not be trained, saved, qualified or opened (boxed: the
    /// error is large).
    #[error(transparent)]
    Learned(Box<roboaudit_memory_learned::LearnedError>),
    /// The FQE collection failed.
    #[error(transparent)]
    FqeCollect(#[from] roboaudit_fqe_collect::CollectError),
    /// The FQE fit failed.
    #[error(transparent)]
    FqeFit(Box<roboaudit_fqe::request::RequestError>),
    /// The report over the audit folders could not be built.
    #[error("cannot build the demo's report from its audit folders")]
    BuildReport(#[source] roboaudit_report::ReportError),
    /// The report could not be written.
    #[error("cannot write the demo's report")]
    WriteReport(#[source] roboaudit_report::ReportError),
    /// A memory stage's records file could not be written.
    #[error("cannot write {}", path.display())]
    WriteRecords {
        /// The records file.
        path: PathBuf,
        /// Why (boxed: the error is large).
        #[source]
        source: Box<roboaudit_data::DataError>,
    },
    /// A result file or folder could not be written.
    #[error(transparent)]
    Write(#[from] roboaudit_data::atomic::WriteError),
    /// A file or folder operation of a stage failed (the message names it).
    #[error("{message}")]
    Io {
        /// What failed, with the path.
        message: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The `fqe.json` of a finished FQE stage is not an FQE report.
    #[error("{} is not an FQE report", path.display())]
    FqeReport {
        /// The file.
        path: PathBuf,
        /// Why it does not parse.
        #[source]
        source: serde_json::Error,
    },
    /// A result could not be serialized (`what` names it).
    #[error("cannot serialize the {what}")]
    Serialize {
        /// What was serialized.
        what: &'static str,
        /// Why it failed.
        #[source]
        source: serde_json::Error,
    },
    /// A finished stage's outputs could not be read back to stamp it.
    #[error("cannot read back the outputs of the stage in {} ({})", dir.display(), outputs.join(", "))]
    Stamp {
        /// The stage's folder.
        dir: PathBuf,
        /// Its outputs, relative to `dir`.
        outputs: Vec<String>,
    },
}

impl DemoError {
    /// [`DemoError::Serialize`] of `what`.
    pub(crate) fn serialize(what: &'static str) -> impl FnOnce(serde_json::Error) -> Self {
        move |source| Self::Serialize { what, source }
    }

    /// [`DemoError::Io`] with `message`.
    pub(crate) fn io(message: String) -> impl FnOnce(std::io::Error) -> Self {
        move |source| Self::Io { message, source }
    }
}

impl From<roboaudit_fqe::request::RequestError> for DemoError {
    fn from(e: roboaudit_fqe::request::RequestError) -> Self {
        Self::FqeFit(Box::new(e))
    }
}

impl From<roboaudit_memory_harness::HarnessError> for DemoError {
    fn from(e: roboaudit_memory_harness::HarnessError) -> Self {
        Self::Memory(e.into())
    }
}

impl From<roboaudit_data::DataError> for DemoError {
    fn from(e: roboaudit_data::DataError) -> Self {
        Self::Memory(e.into())
    }
}

impl From<roboaudit_memory_learned::LearnedError> for DemoError {
    fn from(e: roboaudit_memory_learned::LearnedError) -> Self {
        Self::Learned(Box::new(e))
    }
}
