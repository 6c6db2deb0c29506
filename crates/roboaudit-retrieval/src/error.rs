//! The one error type of the retrieval audit.

use roboaudit_stats::StatsError;

/// Why a retrieval audit could not be run.
///
/// Invalid inputs name the offending row or id; statistics failures carry the underlying
/// [`StatsError`].
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RetrievalError {
    /// A configuration value is outside its valid range (the message says which and why).
    #[error("invalid audit configuration: {0}")]
    InvalidConfig(String),
    /// The inputs have no query scene or no experience.
    #[error("empty input: {what}")]
    Empty {
        /// What is missing (`scenes` or `experiences`).
        what: &'static str,
    },
    /// An id appears twice where ids must be unique.
    #[error("duplicate {what} id {id:?}")]
    DuplicateId {
        /// `scene` or `experience`.
        what: &'static str,
        /// The repeated id.
        id: String,
    },
    /// An execution, selection or embedding names an unknown experience.
    #[error("unknown experience {id:?} in {context}")]
    UnknownExperience {
        /// The unknown id.
        id: String,
        /// Where it was found.
        context: String,
    },
    /// An execution or selection names a scene that is neither a query scene nor the
    /// experience's own base scene.
    #[error("unknown scene {id:?} in {context}")]
    UnknownScene {
        /// The unknown id.
        id: String,
        /// Where it was found.
        context: String,
    },
    /// A (experience, scene) cell of library × query scenes has no execution (SPEC.md §1).
    #[error(
        "missing transfer-matrix cell: experience {experience:?} was never executed in scene {scene:?}"
    )]
    MissingCell {
        /// Experience id.
        experience: String,
        /// Scene id.
        scene: String,
    },
    /// The cells' execution counts have no common denominator small enough for exact rates
    /// (SPEC.md §0): their least common multiple times the number of query scenes exceeds
    /// 2^64.
    #[error(
        "transfer-matrix cells have execution counts {counts:?}: their least common multiple times the {n} query scenes exceeds 2^64, too large to compare success rates exactly; use fewer distinct seed counts per cell"
    )]
    RateDenominator {
        /// Query scenes.
        n: usize,
        /// The distinct execution counts per cell, ascending.
        counts: Vec<usize>,
    },
    /// A representation lacks an embedding, has two, or mixes dimensions.
    #[error("embedding problem in representation {representation:?}: {message}")]
    Embedding {
        /// Representation name.
        representation: String,
        /// What is wrong.
        message: String,
    },
    /// The configuration names, as the structural representation, a representation the
    /// embeddings do not contain.
    #[error(
        "the embeddings hold no representation {name:?} (named as the structural representation); they hold: {}",
        available.join(", ")
    )]
    UnknownRepresentation {
        /// The name asked for.
        name: String,
        /// The representations the embeddings hold, in their order.
        available: Vec<String>,
    },
    /// The user selection log does not give exactly one known experience per query scene.
    #[error("invalid user selection log: {0}")]
    InvalidSelection(String),
    /// A statistic failed on data the audit built (a bug or degenerate input).
    #[error("statistics error while computing {what}")]
    Stats {
        /// What was being computed.
        what: String,
        /// The underlying error.
        #[source]
        source: StatsError,
    },
}

impl RetrievalError {
    /// Wraps a [`StatsError`] with what was being computed.
    pub(crate) fn stats(what: impl Into<String>) -> impl FnOnce(StatsError) -> Self {
        let what = what.into();
        move |source| Self::Stats { what, source }
    }
}
