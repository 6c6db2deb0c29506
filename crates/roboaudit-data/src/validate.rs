//! Checks across files: the invariants documented on [`RetrievalInputs`].

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use roboaudit_types::{EmbeddingKind, RetrievalInputs};

use crate::executions::ExecutionSources;
use crate::readers::kind_name;
use crate::{DataError, RetrievalPaths};

fn short(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

/// Checks the cross-file invariants of [`RetrievalInputs`] (SPEC.md §1 inputs): every
/// execution names a known experience and a known query scene or that experience's own
/// `base_scene_id`; every library × query-scene cell has an execution; each representation
/// embeds every experience and scene and nothing else; each selection names a known query
/// scene and experience, and every query scene has one. Ids must already be unique (the
/// readers check this).
///
/// Selections are checked whenever `inputs.selections` is present (errors then name
/// `paths.selections`, or `selections` when that is `None`).
/// Row numbers in errors are 1-based positions in the given vectors (for an execution log
/// read from a directory of parts, positions in the concatenated log;
/// [`crate::load_retrieval_inputs`] names the part file and its own row instead).
///
/// # Errors
/// The first violation found, as [`DataError::Invalid`] naming the file whose rows refer to
/// the others (`paths`), the row and the column where one row is at fault.
pub fn validate_retrieval_inputs(
    inputs: &RetrievalInputs,
    paths: &RetrievalPaths,
) -> Result<(), DataError> {
    validate_with_sources(inputs, paths, &ExecutionSources::single(&paths.executions))
}

/// [`validate_retrieval_inputs`], with execution rows located in the files they came from.
pub(crate) fn validate_with_sources(
    inputs: &RetrievalInputs,
    paths: &RetrievalPaths,
    sources: &ExecutionSources,
) -> Result<(), DataError> {
    let experience_index: HashMap<&str, usize> = inputs
        .experiences
        .iter()
        .enumerate()
        .map(|(k, e)| (e.experience_id.as_str(), k))
        .collect();
    let scene_index: HashMap<&str, usize> = inputs
        .scenes
        .iter()
        .enumerate()
        .map(|(k, s)| (s.scene_id.as_str(), k))
        .collect();
    check_executions(inputs, paths, sources, &experience_index, &scene_index)?;
    check_embeddings(inputs, paths, &experience_index, &scene_index)?;
    if let Some(selections) = &inputs.selections {
        let file = paths
            .selections
            .clone()
            .unwrap_or_else(|| PathBuf::from("selections"));
        check_selections(inputs, selections, &file, &experience_index, &scene_index)?;
    }
    Ok(())
}

fn check_executions(
    inputs: &RetrievalInputs,
    paths: &RetrievalPaths,
    sources: &ExecutionSources,
    experience_index: &HashMap<&str, usize>,
    scene_index: &HashMap<&str, usize>,
) -> Result<(), DataError> {
    let file = paths.executions.as_path();
    let n_scenes = inputs.scenes.len();
    let mut covered = vec![false; inputs.experiences.len() * n_scenes];
    for (k, execution) in inputs.executions.iter().enumerate() {
        let (row_file, row) = sources.locate(k);
        let row = Some(row);
        let Some(&e) = experience_index.get(execution.experience_id.as_str()) else {
            return Err(DataError::invalid(
                row_file,
                row,
                Some("experience_id"),
                format!(
                    "unknown experience \"{}\" (not in {})",
                    execution.experience_id,
                    short(&paths.experiences)
                ),
            ));
        };
        if let Some(&s) = scene_index.get(execution.scene_id.as_str()) {
            covered[e * n_scenes + s] = true;
        } else if inputs.experiences[e].base_scene_id.as_deref() != Some(&execution.scene_id) {
            return Err(DataError::invalid(
                row_file,
                row,
                Some("scene_id"),
                format!(
                    "unknown scene \"{}\" (not in {} and not the base scene of experience \"{}\")",
                    execution.scene_id,
                    short(&paths.scenes),
                    execution.experience_id
                ),
            ));
        }
    }
    if let Some(first) = covered.iter().position(|c| !c) {
        let missing = covered.iter().filter(|c| !**c).count();
        return Err(DataError::invalid(
            file,
            None,
            None,
            format!(
                "no execution of experience \"{}\" in scene \"{}\" ({missing} of {} experience × scene cells have none)",
                inputs.experiences[first / n_scenes].experience_id,
                inputs.scenes[first % n_scenes].scene_id,
                covered.len()
            ),
        ));
    }
    Ok(())
}

fn check_embeddings(
    inputs: &RetrievalInputs,
    paths: &RetrievalPaths,
    experience_index: &HashMap<&str, usize>,
    scene_index: &HashMap<&str, usize>,
) -> Result<(), DataError> {
    let file = paths.embeddings.as_path();
    // representation -> (experiences covered, scenes covered); insertion order kept for messages.
    let mut order: Vec<&str> = Vec::new();
    let mut coverage: HashMap<&str, (Vec<bool>, Vec<bool>)> = HashMap::new();
    for (k, embedding) in inputs.embeddings.iter().enumerate() {
        let (index, side) = match embedding.kind {
            EmbeddingKind::Experience => (experience_index, &paths.experiences),
            EmbeddingKind::Scene => (scene_index, &paths.scenes),
        };
        let Some(&i) = index.get(embedding.id.as_str()) else {
            return Err(DataError::invalid(
                file,
                Some(k + 1),
                Some("id"),
                format!(
                    "unknown {} \"{}\" (not in {})",
                    kind_name(embedding.kind),
                    embedding.id,
                    short(side)
                ),
            ));
        };
        let entry = coverage
            .entry(embedding.representation.as_str())
            .or_insert_with(|| {
                order.push(embedding.representation.as_str());
                (
                    vec![false; inputs.experiences.len()],
                    vec![false; inputs.scenes.len()],
                )
            });
        match embedding.kind {
            EmbeddingKind::Experience => entry.0[i] = true,
            EmbeddingKind::Scene => entry.1[i] = true,
        }
    }
    for representation in order {
        let Some((experiences, scenes)) = coverage.get(representation) else {
            continue;
        };
        let missing = experiences
            .iter()
            .position(|c| !c)
            .map(|e| ("experience", &inputs.experiences[e].experience_id))
            .or_else(|| {
                scenes
                    .iter()
                    .position(|c| !c)
                    .map(|s| ("scene", &inputs.scenes[s].scene_id))
            });
        if let Some((kind, id)) = missing {
            return Err(DataError::invalid(
                file,
                None,
                None,
                format!("representation \"{representation}\" has no embedding for {kind} \"{id}\""),
            ));
        }
    }
    Ok(())
}

fn check_selections(
    inputs: &RetrievalInputs,
    selections: &[roboaudit_types::SelectionRecord],
    file: &Path,
    experience_index: &HashMap<&str, usize>,
    scene_index: &HashMap<&str, usize>,
) -> Result<(), DataError> {
    let mut selected = vec![false; inputs.scenes.len()];
    for (k, selection) in selections.iter().enumerate() {
        let Some(&s) = scene_index.get(selection.scene_id.as_str()) else {
            return Err(DataError::invalid(
                file,
                Some(k + 1),
                Some("scene_id"),
                format!("unknown query scene \"{}\"", selection.scene_id),
            ));
        };
        if !experience_index.contains_key(selection.experience_id.as_str()) {
            return Err(DataError::invalid(
                file,
                Some(k + 1),
                Some("experience_id"),
                format!("unknown experience \"{}\"", selection.experience_id),
            ));
        }
        selected[s] = true;
    }
    if let Some(s) = selected.iter().position(|c| !c) {
        return Err(DataError::invalid(
            file,
            None,
            None,
            format!(
                "no selection for query scene \"{}\"",
                inputs.scenes[s].scene_id
            ),
        ));
    }
    Ok(())
}
