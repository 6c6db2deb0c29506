//! The `roboaudit embed` pipeline: representations of a folder of images or of a LeRobot
//! dataset's first frames, written as the `embeddings` file the retrieval audit reads (rows
//! `representation, kind, id, vector`: [`roboaudit_types::EmbeddingRecord`], written by
//! [`roboaudit_data::write_embeddings`] and read back by [`roboaudit_data::read_embeddings`]).
//!
//! Sources ([`EmbedSource`]):
//! - a folder with `experiences/` and `scenes/` subfolders of PNG files: each file one item of
//!   that kind, its id the file name without `.png`;
//! - a flat folder of PNG files, all of one kind given by the caller;
//! - a LeRobot dataset (v3.0 or v2.1): the first frame (`frame_index` 0) of each episode of one
//!   camera (`image` feature, or `video` feature decoded through FFmpeg), id `episode_<index>`,
//!   all of one kind.
//!
//! Every input is read and every encoder loaded before anything is written; the file is written
//! to a temporary file beside `out` and renamed over it, so a failure leaves `out` as it was.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use roboaudit_data::lerobot::{DEFAULT_TOLERANCE_S, LeRobotDataset, Rgb8Image, decode_png};
use roboaudit_types::{EmbeddingKind, EmbeddingRecord};

use crate::EncoderError;
use crate::spec::{ImageEncoder, RepresentationSpec};

/// Where the images come from.
#[derive(Debug, Clone, PartialEq)]
pub enum EmbedSource {
    /// A folder of PNG files: with `experiences/` and/or `scenes/` subfolders (then `kind` must
    /// be `None`), or flat (then `kind` says what every image is).
    Images {
        /// The folder.
        dir: PathBuf,
        /// The kind of every image of a flat folder.
        kind: Option<EmbeddingKind>,
    },
    /// The first frame of each episode of a LeRobot dataset.
    LeRobot {
        /// The dataset folder (holding `meta/info.json`).
        dir: PathBuf,
        /// The camera: an `image` or `video` feature; `None`: the first `image` feature by name,
        /// else the first decodable `video` feature.
        camera: Option<String>,
        /// The kind of every episode's frame.
        kind: EmbeddingKind,
    },
}

/// One image to embed.
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    /// Experience or scene.
    pub kind: EmbeddingKind,
    /// Its id in the embeddings file.
    pub id: String,
    /// The decoded image.
    pub image: Rgb8Image,
}

/// What [`embed`] did per representation.
#[derive(Debug, Clone, PartialEq)]
pub struct RepresentationSummary {
    /// The representation's name in the file.
    pub name: String,
    /// The encoder's id (kind, weights file stem, input side).
    pub encoder: String,
    /// 16 hex digits of the weights' SHA-256, or `none`.
    pub weights_hash: String,
    /// Vector dimension.
    pub dim: usize,
    /// Seconds spent encoding (wall clock; not part of any output file).
    pub seconds: f64,
}

/// The result of [`embed`].
#[derive(Debug, Clone, PartialEq)]
pub struct EmbedSummary {
    /// Experiences embedded.
    pub experiences: usize,
    /// Scenes embedded.
    pub scenes: usize,
    /// One entry per representation, in the order asked.
    pub representations: Vec<RepresentationSummary>,
    /// Rows written.
    pub rows: usize,
}

fn bad(path: &Path, message: String) -> EncoderError {
    EncoderError::BadInput {
        path: path.to_path_buf(),
        message,
    }
}

/// The PNG files of `dir` (extension `png`, any case), sorted by name, as `(id, path)`.
fn png_files(dir: &Path) -> Result<Vec<(String, PathBuf)>, EncoderError> {
    let entries = std::fs::read_dir(dir).map_err(|e| EncoderError::io("list", dir, e))?;
    let mut out = BTreeMap::new();
    for entry in entries {
        let path = entry.map_err(|e| EncoderError::io("list", dir, e))?.path();
        let is_png = path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("png"));
        if !is_png || !path.is_file() {
            continue;
        }
        let id = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        if let Some(other) = out.insert(id.clone(), path.clone()) {
            return Err(bad(
                &path,
                format!(
                    "two images have the id \"{id}\" (the other: {})",
                    other.display()
                ),
            ));
        }
    }
    Ok(out.into_iter().collect())
}

/// Reads and decodes one PNG file.
///
/// # Errors
/// [`EncoderError::Io`] when it cannot be read; [`EncoderError::BadImage`] naming it when it is
/// not a valid PNG image.
pub fn read_png(path: &Path) -> Result<Rgb8Image, EncoderError> {
    let bytes = std::fs::read(path).map_err(|e| EncoderError::io("read", path, e))?;
    decode_png(&bytes).map_err(|message| EncoderError::BadImage {
        path: path.to_path_buf(),
        message,
    })
}

/// The items of `source`, decoded: experiences first, then scenes, each sorted by id (a flat
/// folder and a dataset give one kind, in file-name or episode order).
///
/// # Errors
/// [`EncoderError::InvalidConfig`] for a flat folder without a kind, a folder with
/// subfolders and a kind, or a `camera` the dataset does not declare as an image or video
/// feature; [`EncoderError::BadInput`] for a folder without PNG files or two
/// files of one id; [`EncoderError::Io`] / [`EncoderError::BadImage`] naming the file;
/// [`EncoderError::Data`] for a dataset that cannot be read (naming the file).
pub fn read_items(source: &EmbedSource) -> Result<Vec<Item>, EncoderError> {
    match source {
        EmbedSource::Images { dir, kind } => {
            if !dir.is_dir() {
                return Err(EncoderError::io(
                    "list",
                    dir,
                    std::io::Error::new(std::io::ErrorKind::NotFound, "not a folder"),
                ));
            }
            let sub = [
                (EmbeddingKind::Experience, dir.join("experiences")),
                (EmbeddingKind::Scene, dir.join("scenes")),
            ];
            let layout = sub.iter().any(|(_, d)| d.is_dir());
            let lists: Vec<(EmbeddingKind, Vec<(String, PathBuf)>)> = match (layout, kind) {
                (true, Some(_)) => {
                    return Err(EncoderError::InvalidConfig(format!(
                        "{} has experiences/ or scenes/ subfolders, which give each image's kind: \
                         drop --kind",
                        dir.display()
                    )));
                }
                (true, None) => sub
                    .iter()
                    .filter(|(_, d)| d.is_dir())
                    .map(|(k, d)| Ok((*k, png_files(d)?)))
                    .collect::<Result<_, EncoderError>>()?,
                (false, Some(k)) => vec![(*k, png_files(dir)?)],
                (false, None) => {
                    return Err(EncoderError::InvalidConfig(format!(
                        "{} is a flat folder of images: say which kind they are with --kind \
                         experience|scene, or put them in experiences/ and scenes/ subfolders",
                        dir.display()
                    )));
                }
            };
            let files: Vec<(EmbeddingKind, String, PathBuf)> = lists
                .into_iter()
                .flat_map(|(k, list)| list.into_iter().map(move |(id, p)| (k, id, p)))
                .collect();
            if files.is_empty() {
                return Err(bad(dir, "no PNG image (*.png) to embed".into()));
            }
            files
                .into_par_iter()
                .map(|(kind, id, path)| {
                    Ok(Item {
                        kind,
                        id,
                        image: read_png(&path)?,
                    })
                })
                .collect()
        }
        EmbedSource::LeRobot { dir, camera, kind } => {
            let ds = LeRobotDataset::open(dir)?;
            let camera = match camera {
                Some(c) => {
                    let ok = ds
                        .feature(c)
                        .is_some_and(roboaudit_data::lerobot::Feature::is_camera);
                    // The camera is the user's choice on a readable dataset: a wrong option,
                    // as a wrong `data frame --key` or `fqe fit --features` is.
                    if !ok {
                        return Err(EncoderError::InvalidConfig(format!(
                            "--camera {c}: {} declares no image or video feature of that name (declared: {})",
                            dir.join("meta/info.json").display(),
                            ds.describe_features()
                        )));
                    }
                    c.clone()
                }
                None => ds.first_camera()
                    .ok_or_else(|| bad(&dir.join("meta/info.json"), "no camera: the dataset declares no image feature and no decodable video feature".into()))?,
            };
            let episodes: Vec<i64> = ds.episodes().iter().map(|e| e.index).collect();
            if episodes.is_empty() {
                return Err(bad(dir, "the dataset has no episode".into()));
            }
            episodes
                .par_iter()
                .map(|&e| {
                    Ok(Item {
                        kind: *kind,
                        id: format!("episode_{e}"),
                        image: ds.read_frame(e, 0, &camera, DEFAULT_TOLERANCE_S)?,
                    })
                })
                .collect()
        }
    }
}

/// Encodes every item with every encoder: rows grouped by representation (in the order given),
/// items in their order within each. Images are encoded in parallel on rayon's pool; each
/// vector depends on its image alone, so the output does not depend on the thread count.
///
/// # Errors
/// The encoders' errors (the first failing image's).
pub fn encode_items(
    items: &[Item],
    encoders: &[(String, ImageEncoder)],
) -> Result<(Vec<EmbeddingRecord>, Vec<f64>), EncoderError> {
    let mut records = Vec::with_capacity(items.len() * encoders.len());
    let mut seconds = Vec::with_capacity(encoders.len());
    for (name, encoder) in encoders {
        let start = std::time::Instant::now();
        let vectors: Vec<Vec<f32>> = items
            .par_iter()
            .map(|item| {
                // An image of a size the encoder cannot take is named by its id (the file's
                // name without `.png`, or `episode_N`): which of many images is wrong.
                encoder.encode(&item.image).map_err(|e| match e {
                    EncoderError::ImageSize { encoder, message } => EncoderError::ImageSize {
                        encoder,
                        message: format!(
                            "{message} (the {} image `{}`)",
                            kind_name(item.kind),
                            item.id
                        ),
                    },
                    other => other,
                })
            })
            .collect::<Result<_, _>>()?;
        seconds.push(start.elapsed().as_secs_f64());
        records.extend(
            items
                .iter()
                .zip(vectors)
                .map(|(item, vector)| EmbeddingRecord {
                    representation: name.clone(),
                    kind: item.kind,
                    id: item.id.clone(),
                    vector,
                }),
        );
    }
    Ok((records, seconds))
}

/// Writes `records` to `out` atomically (a temporary file in `out`'s folder, renamed over it;
/// the folder is created when missing); the format follows `out`'s extension (`.parquet`,
/// `.csv`, `.jsonl`).
///
/// # Errors
/// [`EncoderError::Write`] naming `out` (nothing is left there: an existing file is kept).
pub fn write_embeddings_atomic(
    out: &Path,
    records: &[EmbeddingRecord],
) -> Result<(), EncoderError> {
    let fail = |message: String| EncoderError::Write {
        path: out.to_path_buf(),
        message,
    };
    let dir = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let suffix = out
        .extension()
        .map(|e| format!(".{}", e.to_string_lossy()))
        .unwrap_or_default();
    // A missing folder is the user's new output folder, as every other `--out` is.
    std::fs::create_dir_all(dir).map_err(|e| fail(format!("cannot create its folder: {e}")))?;
    let tmp = roboaudit_data::atomic::result_file_builder()
        .prefix(".embeddings-")
        .suffix(&suffix)
        .tempfile_in(dir)
        .map_err(|e| fail(e.to_string()))?;
    roboaudit_data::write_embeddings(tmp.path(), records)
        .map_err(|e| fail(roboaudit_types::error_chain(&e)))?;
    tmp.persist(out).map_err(|e| fail(e.error.to_string()))?;
    Ok(())
}

/// Reads `source`, loads every representation, encodes and writes `out` atomically.
///
/// # Errors
/// [`EncoderError::InvalidConfig`] for `structural`, two representations of one name, or an
/// extension the writer does not know (checked first); then those of [`read_items`], of the
/// encoders' `load` and of [`write_embeddings_atomic`]. Nothing is written on error.
pub fn embed(
    source: &EmbedSource,
    specs: &[RepresentationSpec],
    out: &Path,
) -> Result<EmbedSummary, EncoderError> {
    if specs.is_empty() {
        return Err(EncoderError::InvalidConfig(
            "give at least one representation".into(),
        ));
    }
    let ext = out
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    if !matches!(ext.as_str(), "parquet" | "csv" | "jsonl") {
        return Err(EncoderError::InvalidConfig(format!(
            "{}: the embeddings file must end in .parquet, .csv or .jsonl",
            out.display()
        )));
    }
    let mut seen = std::collections::BTreeSet::new();
    for s in specs {
        if !seen.insert(s.name()) {
            return Err(EncoderError::InvalidConfig(format!(
                "two representations are named \"{}\": give one of them ,name=NAME",
                s.name()
            )));
        }
    }
    // Loading first: a wrong weights file is refused before the images are decoded.
    let encoders: Vec<(String, ImageEncoder)> = specs
        .iter()
        .map(|s| Ok((s.name().to_owned(), s.load()?)))
        .collect::<Result<_, EncoderError>>()?;
    let items = read_items(source)?;
    let (records, seconds) = encode_items(&items, &encoders)?;
    write_embeddings_atomic(out, &records)?;
    let count = |k| items.iter().filter(|i| i.kind == k).count();
    Ok(EmbedSummary {
        experiences: count(EmbeddingKind::Experience),
        scenes: count(EmbeddingKind::Scene),
        representations: encoders
            .iter()
            .zip(seconds)
            .map(|((name, e), seconds)| RepresentationSummary {
                name: name.clone(),
                encoder: e.id(),
                weights_hash: e.weights_hash().to_owned(),
                dim: e.dim(),
                seconds,
            })
            .collect(),
        rows: records.len(),
    })
}

/// `experience` or `scene`, as the embeddings file writes the kind.
fn kind_name(kind: EmbeddingKind) -> &'static str {
    match kind {
        EmbeddingKind::Experience => "experience",
        EmbeddingKind::Scene => "scene",
    }
}
