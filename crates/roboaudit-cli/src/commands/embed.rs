//! `roboaudit embed`: representations of a folder of images or of a LeRobot dataset's first
//! frames, written as the embeddings file the retrieval audit reads (`retrieval audit
//! --embeddings`, or `embeddings.parquet` in a run folder). The pipeline is
//! `roboaudit_encoders::embed`; this module parses, calls it and prints.

use anyhow::Result;
use roboaudit_encoders::{EmbedOptions, embed};

use crate::exit::Usage;

/// Runs `roboaudit embed`.
///
/// # Errors
/// [`Usage`] (exit code 2) for a malformed representation or missing --kind; the encoders' errors
/// (exit code 3 for a weights file, image or dataset that is missing or wrong, naming the file).
pub fn run(options: &EmbedOptions) -> Result<()> {
    let specs = options.specs().map_err(|e| {
        Usage(format!(
            "--representation {}",
            roboaudit_types::error_chain(&e)
        ))
    })?;
    let source = options
        .source()
        .map_err(|e| Usage(roboaudit_types::error_chain(&e)))?;
    crate::paths::refuse_folder("--out", &options.out)?;
    crate::paths::refuse_inside_any_dataset("--out", &options.out)?;
    crate::output::refuse_replacing("--out", &options.out, "an embeddings file", &|p| {
        roboaudit_data::read_embeddings(p).is_ok()
    })?;
    let summary = embed(&source, &specs, &options.out)?;
    out!("{}", summary.render(&options.out))?;
    // Timing varies run to run: stderr, so stdout stays the same for the same inputs.
    eprint!("{}", summary.rates());
    Ok(())
}
