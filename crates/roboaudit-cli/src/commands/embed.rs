//! `roboaudit embed`: representations of a folder of images or of a LeRobot dataset's first
//! frames, written as the embeddings file the retrieval audit reads (`retrieval audit
//! --embeddings`, or `embeddings.parquet` in a run folder). The pipeline is
//! `roboaudit_encoders::embed`; this module parses, calls it and prints.

use std::path::PathBuf;

use anyhow::Result;
use clap::{Args, ValueEnum};
use roboaudit_encoders::{EmbedSource, RepresentationSpec, embed};
use roboaudit_types::EmbeddingKind;

use crate::exit::Usage;

/// What the images are.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Kind {
    /// Stored experiences (their first images).
    Experience,
    /// Query scenes.
    Scene,
}

/// Arguments of `roboaudit embed`.
#[derive(Debug, Args)]
pub struct EmbedArgs {
    /// A folder of PNG images: with `experiences/` and `scenes/` subfolders, or flat with
    /// --kind. Each image's id is its file name without `.png`.
    #[arg(
        long,
        value_name = "DIR",
        conflicts_with = "lerobot",
        required_unless_present = "lerobot"
    )]
    pub images: Option<PathBuf>,
    /// A LeRobot dataset (v3.0 or v2.1): the first frame of each episode, id `episode_<index>`
    /// (with --kind).
    #[arg(long, value_name = "DIR")]
    pub lerobot: Option<PathBuf>,
    /// The camera of --lerobot: an `image` or `video` feature (default: the first image feature
    /// by name, else the first decodable video feature).
    #[arg(long, value_name = "KEY", requires = "lerobot")]
    pub camera: Option<String>,
    /// What every image is: for a flat --images folder and for --lerobot.
    #[arg(long, value_enum)]
    pub kind: Option<Kind>,
    /// A representation (repeatable): pixels32, resnet18:PATH[,side=N],
    /// dinov2:PATH[,side=N][,heads=N], clip:PATH[,heads=N][,side=N]; each may add ,name=NAME
    /// (its name in the file; default the kind). Weights are read from local safetensors files:
    /// torchvision's resnet18 layout, DINOv2's torch-hub layout, transformers' CLIP vision layout.
    #[arg(
        long = "representation",
        short = 'r',
        value_name = "SPEC",
        required = true
    )]
    pub representations: Vec<String>,
    /// The embeddings file to write (.parquet, .csv or .jsonl); replaced atomically.
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
}

/// Runs `roboaudit embed`.
///
/// # Errors
/// [`Usage`] (exit code 2) for a malformed representation or missing --kind; the encoders' errors
/// (exit code 3 for a weights file, image or dataset that is missing or wrong, naming the file).
pub fn run(args: &EmbedArgs) -> Result<()> {
    let specs = args
        .representations
        .iter()
        .map(|s| RepresentationSpec::parse(s))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| Usage(format!("--representation {e}")))?;
    let kind = args.kind.map(|k| match k {
        Kind::Experience => EmbeddingKind::Experience,
        Kind::Scene => EmbeddingKind::Scene,
    });
    let source = EmbedSource::from_options(
        args.images.clone(),
        args.lerobot.clone(),
        args.camera.clone(),
        kind,
    )
    .map_err(|e| Usage(e.to_string()))?;
    let summary = embed(&source, &specs, &args.out)?;
    out!("{}", summary.render(&args.out))?;
    // Timing varies run to run: stderr, so stdout stays the same for the same inputs.
    eprint!("{}", summary.rates());
    Ok(())
}
