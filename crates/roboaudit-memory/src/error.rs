//! The one error type of the counterfactual memory audit.

use std::path::PathBuf;

use roboaudit_stats::StatsError;

/// Why a memory audit could not be run or its output not be written.
#[derive(Debug, thiserror::Error)]
pub enum MemoryError {
    /// The plan file could not be read.
    #[error("cannot read plan file {}", path.display())]
    PlanIo {
        /// The plan file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The plan is not valid TOML, has an unknown key, or a value out of range (the message
    /// says which); `path` is `None` for a plan given as text.
    #[error("invalid plan: {message}{}", path.as_ref().map(|p| format!(", in {}", p.display())).unwrap_or_default())]
    InvalidPlan {
        /// What is wrong.
        message: String,
        /// The plan file, when read from one.
        path: Option<PathBuf>,
    },
    /// The records break an invariant the audit needs (incomplete pair, unregistered or missing
    /// seed, inconsistent pair attributes, …); the message names the pair.
    #[error("invalid memory records: {0}")]
    InvalidRecords(String),
    /// Re-running under a plan that differs from the one the existing outputs or records were
    /// produced under (SPEC.md §2 preregistration).
    #[error(
        "refusing to run: {what} was produced under plan {previous}, but the current plan hashes to {current}; the plan must not change after outcomes are recorded (restore the original plan, or write to a new output folder if this is a new, separately registered analysis), in {}",
        file.display()
    )]
    PlanChanged {
        /// `an existing audit.json` or `the records file`.
        what: &'static str,
        /// The plan hash found.
        previous: String,
        /// The current plan hash.
        current: String,
        /// The file holding the previous hash.
        file: PathBuf,
    },
    /// An existing output file cannot be read or was not written by the memory audit.
    #[error("cannot check the plan of an existing output: {message}, in {}", file.display())]
    ExistingOutput {
        /// What is wrong.
        message: String,
        /// The existing file.
        file: PathBuf,
    },
    /// A statistics routine failed.
    #[error(transparent)]
    Stats(#[from] StatsError),
}

impl MemoryError {
    /// True for errors caused by the user's inputs (a missing, unreadable or invalid plan,
    /// records, a changed plan), which the CLI reports with its invalid-input exit code.
    pub fn is_invalid_input(&self) -> bool {
        matches!(
            self,
            Self::PlanIo { .. }
                | Self::InvalidPlan { .. }
                | Self::InvalidRecords(_)
                | Self::PlanChanged { .. }
        )
    }

    /// The same error naming the plan file `path` when it is an [`MemoryError::InvalidPlan`]
    /// found after the plan was loaded (in the light of the records), so the user learns
    /// which file to fix.
    pub fn in_plan_file(self, path: &std::path::Path) -> Self {
        match self {
            Self::InvalidPlan {
                message,
                path: None,
            } => Self::InvalidPlan {
                message,
                path: Some(path.to_path_buf()),
            },
            other => other,
        }
    }
}
