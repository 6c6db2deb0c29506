//! The options of `roboaudit embed`, where it reads its images from, resolved from them, and
//! what it says after a run (the CLI prints it; nothing is printed here).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use roboaudit_types::EmbeddingKind;

use crate::EncoderError;
use crate::embed::{EmbedSource, EmbedSummary};
use crate::spec::RepresentationSpec;

/// The options of `roboaudit embed` as a user gives them: an image folder or a LeRobot dataset
/// (with its camera), what the images are, the representations as text
/// ([`RepresentationSpec::parse`]) and the embeddings file to write. [`Self::source`] and
/// [`Self::specs`] make the typed inputs of [`crate::embed()`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct EmbedOptions {
    /// A folder of PNG images: with `experiences/` and `scenes/` subfolders, or flat with
    /// --kind. Each image's id is its file name without `.png`.
    #[cfg_attr(
        feature = "clap",
        arg(
            long,
            value_name = "DIR",
            conflicts_with = "lerobot",
            required_unless_present = "lerobot"
        )
    )]
    pub images: Option<PathBuf>,
    /// A LeRobot dataset (v3.0 or v2.1): the first frame of each episode, id `episode_<index>`
    /// (with --kind).
    #[cfg_attr(feature = "clap", arg(long, value_name = "DIR"))]
    pub lerobot: Option<PathBuf>,
    /// The camera of --lerobot: an `image` or `video` feature (default: the first image feature
    /// by name, else the first decodable video feature).
    #[cfg_attr(feature = "clap", arg(long, value_name = "KEY", requires = "lerobot"))]
    pub camera: Option<String>,
    /// What every image is: for a flat --images folder and for --lerobot.
    #[cfg_attr(feature = "clap", arg(long, value_parser = kind_parser()))]
    pub kind: Option<EmbeddingKind>,
    /// A representation (repeatable): pixels32, resnet18:PATH[,side=N],
    /// dinov2:PATH[,side=N][,heads=N], clip:PATH[,heads=N][,side=N], policy_encoder:DIR; each may
    /// add ,name=NAME (its name in the file; default the kind). Weights are read from local
    /// safetensors files: torchvision's resnet18 layout, DINOv2's torch-hub layout, transformers'
    /// CLIP vision layout; DIR is a Policy+DR checkpoint folder of `retrieval collect --mechanism
    /// policy-dr` (RUN/policies/cNNN: model.safetensors + config.json), whose policy takes
    /// images square with a side a multiple of 32.
    #[cfg_attr(
        feature = "clap",
        arg(
            long = "representation",
            short = 'r',
            value_name = "SPEC",
            required = true
        )
    )]
    pub representations: Vec<String>,
    /// The embeddings file to write (.parquet, .csv or .jsonl); replaced atomically. An existing
    /// file is replaced only when it is an embeddings file and not in a run folder.
    #[cfg_attr(feature = "clap", arg(long, value_name = "FILE"))]
    pub out: PathBuf,
}

/// Parses `--kind`: `experience` or `scene`, each listed in the help with what it means.
#[cfg(feature = "clap")]
fn kind_parser() -> impl clap::builder::TypedValueParser<Value = EmbeddingKind> {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser as _};
    PossibleValuesParser::new([
        PossibleValue::new("experience").help("Stored experiences (their first images)"),
        PossibleValue::new("scene").help("Query scenes"),
    ])
    .map(|name| {
        if name == "scene" {
            EmbeddingKind::Scene
        } else {
            EmbeddingKind::Experience
        }
    })
}

impl EmbedOptions {
    /// The representations, parsed in order.
    ///
    /// # Errors
    /// The first malformed one's [`EncoderError::InvalidConfig`] ([`RepresentationSpec::parse`]).
    pub fn specs(&self) -> Result<Vec<RepresentationSpec>, EncoderError> {
        self.representations
            .iter()
            .map(|s| RepresentationSpec::parse(s))
            .collect()
    }

    /// The image source the options name ([`EmbedSource::from_options`]).
    ///
    /// # Errors
    /// [`SourceError`] as [`EmbedSource::from_options`] returns it.
    pub fn source(&self) -> Result<EmbedSource, SourceError> {
        EmbedSource::from_options(
            self.images.clone(),
            self.lerobot.clone(),
            self.camera.clone(),
            self.kind,
        )
    }
}

/// Why the options name no usable image source (a command-line usage error).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SourceError {
    /// Neither an image folder nor a dataset was given.
    #[error("give --images DIR or --lerobot DIR")]
    Missing,
    /// A dataset was given without saying what its episodes are.
    #[error("--lerobot needs --kind experience|scene: what the episodes are")]
    LeRobotKind,
}

impl EmbedSource {
    /// The source the options name: the image folder `images` (with `kind` for a flat one)
    /// when given, else the first frames of dataset `lerobot` through `camera` (`kind`
    /// required).
    ///
    /// # Errors
    /// [`SourceError::Missing`] without either; [`SourceError::LeRobotKind`] for a dataset
    /// without `kind`.
    pub fn from_options(
        images: Option<PathBuf>,
        lerobot: Option<PathBuf>,
        camera: Option<String>,
        kind: Option<EmbeddingKind>,
    ) -> Result<Self, SourceError> {
        match (images, lerobot) {
            (Some(dir), _) => Ok(Self::Images { dir, kind }),
            (None, Some(dir)) => Ok(Self::LeRobot {
                dir,
                camera,
                kind: kind.ok_or(SourceError::LeRobotKind)?,
            }),
            (None, None) => Err(SourceError::Missing),
        }
    }
}

impl EmbedSummary {
    /// The file written to `out` with its rows, then per representation its dimension, encoder
    /// and weights hash; each line ends in a newline. The same for the same inputs (no timing).
    #[must_use]
    pub fn render(&self, out: &Path) -> String {
        let mut text = format!(
            "wrote {}: {} rows ({} experiences, {} scenes)\n",
            out.display(),
            self.rows,
            self.experiences,
            self.scenes
        );
        for r in &self.representations {
            let _ = writeln!(
                text,
                "  {}: {} dimensions, encoder {} (weights {})",
                r.name, r.dim, r.encoder, r.weights_hash
            );
        }
        text
    }

    /// Per representation, the images encoded per second of its encoding (wall clock, so it
    /// varies run to run), one decimal; each line ends in a newline.
    #[must_use]
    pub fn rates(&self) -> String {
        let n = self.experiences + self.scenes;
        let mut text = String::new();
        for r in &self.representations {
            let rate = n as f64 / r.seconds.max(1e-9);
            let _ = writeln!(text, "  {}: {rate:.1} images/s", r.name);
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embed::RepresentationSummary;

    #[test]
    fn a_summary_lists_each_representation_and_its_rate() {
        let summary = EmbedSummary {
            experiences: 3,
            scenes: 5,
            representations: vec![RepresentationSummary {
                name: "pixels32".into(),
                encoder: "pixels32".into(),
                weights_hash: "none".into(),
                dim: 3072,
                seconds: 0.5,
            }],
            rows: 8,
        };
        assert_eq!(
            summary.render(Path::new("emb.parquet")),
            "wrote emb.parquet: 8 rows (3 experiences, 5 scenes)\n  pixels32: 3072 dimensions, encoder pixels32 (weights none)\n"
        );
        assert_eq!(summary.rates(), "  pixels32: 16.0 images/s\n");
    }

    #[test]
    fn a_dataset_needs_a_kind_and_an_image_folder_wins() {
        let scene = Some(EmbeddingKind::Scene);
        assert_eq!(
            EmbedSource::from_options(None, Some("ds".into()), None, None),
            Err(SourceError::LeRobotKind)
        );
        assert_eq!(
            EmbedSource::from_options(Some("img".into()), Some("ds".into()), None, scene),
            Ok(EmbedSource::Images {
                dir: "img".into(),
                kind: scene
            })
        );
        assert_eq!(
            EmbedSource::from_options(None, None, None, scene),
            Err(SourceError::Missing)
        );
    }
}
