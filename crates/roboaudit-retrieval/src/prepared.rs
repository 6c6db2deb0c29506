//! Audit inputs checked and indexed once: the transfer matrix and each representation's vectors
//! in library and scene order (SPEC.md §1 input contract).

use crate::RetrievalError;
use crate::geometry::RepVectors;
use crate::matrix::Transfer;
use rayon::prelude::*;
use roboaudit_types::RetrievalInputs;

/// [`RetrievalInputs`] validated and indexed for [`crate::run_prepared`]: the transfer matrix
/// `P[e,s]` of every library × query cell (with each cell's outcomes) and every
/// representation's vectors in library and scene order. Preparing once serves several audits
/// of the same inputs (other configs, seeds or structural representations) and separates the
/// input checks from the audit's own work.
///
/// # Example
/// ```
/// use roboaudit_retrieval::synthetic::{SyntheticSpec, generate};
/// use roboaudit_retrieval::{AuditConfig, PreparedInputs, run_audit, run_prepared};
///
/// let inputs = generate(&SyntheticSpec { experiences: 5, scenes: 6, seeds: 2, representations: 1, dim: 4, seed: 3 });
/// let config = AuditConfig { resamples: 200, permutations: 200, library_sizes: vec![], ..AuditConfig::default() }.check()?;
/// let prepared = PreparedInputs::new(&inputs)?;
/// assert_eq!(run_prepared(&prepared, &config)?, run_audit(&inputs, &config)?);
/// # Ok::<(), roboaudit_retrieval::RetrievalError>(())
/// ```
#[derive(Debug, Clone)]
pub struct PreparedInputs<'a> {
    pub(crate) inputs: &'a RetrievalInputs,
    pub(crate) t: Transfer,
    pub(crate) reps: Vec<RepVectors<'a>>,
}

impl<'a> PreparedInputs<'a> {
    /// Checks `inputs` and indexes them.
    ///
    /// # Errors
    /// The transfer matrix's: [`RetrievalError::Empty`] (no experience or scene),
    /// [`RetrievalError::DuplicateId`], [`RetrievalError::UnknownExperience`],
    /// [`RetrievalError::UnknownScene`], [`RetrievalError::MissingCell`]; then
    /// [`RetrievalError::Embedding`] for a representation with a missing, duplicated or
    /// wrongly sized vector.
    pub fn new(inputs: &'a RetrievalInputs) -> Result<Self, RetrievalError> {
        let t = Transfer::build(inputs)?;
        let mut names: Vec<&str> = Vec::new();
        for rec in &inputs.embeddings {
            if !names.contains(&rec.representation.as_str()) {
                names.push(rec.representation.as_str());
            }
        }
        let reps = names
            .par_iter()
            .map(|name| RepVectors::collect(inputs, name))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self { inputs, t, reps })
    }

    /// The inputs these were prepared from.
    pub fn inputs(&self) -> &'a RetrievalInputs {
        self.inputs
    }
}
