//! The frame features of a fit named as text (`image:KEY`, `state:COLUMN`, a bare key, `none`,
//! `auto`), checked against the features the dataset declares, and the component cap a fit
//! warns about.

use roboaudit_data::lerobot::{FeatureKind, LeRobotDataset};

use super::RequestError;
use crate::pca::max_components;
use crate::{Encoder, FrameFeatures, LoadOptions, component_rows};

/// Refuses a feature `key` named by `option` that the dataset does not declare: a wrong option
/// (as for the frame features), listing the declared features and any other accepted `extra`.
pub(crate) fn declared(
    ds: &LeRobotDataset,
    option: &str,
    key: &str,
    extra: &str,
) -> Result<(), RequestError> {
    if ds.feature(key).is_some() {
        return Ok(());
    }
    Err(RequestError::Usage(format!(
        "{option} {key}: the dataset {} declares no feature \"{key}\"; declared features: {}{extra}",
        ds.root().display(),
        ds.describe_features()
    )))
}

/// Refuses a `key` given to `option` that the dataset declares but not as a numeric column
/// (a camera, a string): a wrong option (exit 2), named with what the key is. An undeclared key
/// passes (the caller names it with [`declared`]).
///
/// # Errors
/// [`RequestError::Usage`] for a declared key that is not numeric.
pub(crate) fn numeric(ds: &LeRobotDataset, option: &str, key: &str) -> Result<(), RequestError> {
    let root = ds.root().display();
    match ds.feature(key).map(|f| f.kind) {
        Some(FeatureKind::Numeric) | None => Ok(()),
        Some(FeatureKind::Image | FeatureKind::Video) => Err(RequestError::Usage(format!(
            "{option} {key}: \"{key}\" is a camera (`image` or `video` feature) of the dataset \
             {root}, not a numeric column; a camera is --features image:{key}"
        ))),
        Some(_) => Err(RequestError::Usage(format!(
            "{option} {key}: \"{key}\" is not a numeric column of the dataset {root}"
        ))),
    }
}

/// The frame-feature source named by `spec`: `image:KEY` (a camera, `image` or `video`
/// feature), `state:COLUMN` (a numeric vector column), a bare KEY (by its declared kind),
/// `none`, or `auto`: the first `image` feature by name, else the first `video` feature whose
/// MP4 files are all present and open, else `state_feature` when it is a numeric column.
///
/// # Errors
/// [`RequestError::Usage`] for a key the dataset does not declare (the message lists what it
/// declares); [`RequestError::Input`] when `auto` finds nothing usable.
pub fn frame_features(
    spec: &str,
    ds: &LeRobotDataset,
    state_feature: Option<&str>,
) -> Result<FrameFeatures, RequestError> {
    // A key the dataset does not declare is a wrong option, not a bad dataset.
    let undeclared = |key: &str| {
        RequestError::Usage(format!(
            "--features {spec}: the dataset {} declares no feature \"{key}\"; declared features: {}",
            ds.root().display(),
            ds.describe_features()
        ))
    };
    // A declared key of the wrong kind is a wrong option too (exit 2), not a bad dataset.
    let kind = |key: &str| {
        ds.feature(key)
            .map(|f| f.kind)
            .ok_or_else(|| undeclared(key))
    };
    if let Some(key) = spec.strip_prefix("image:") {
        if !matches!(kind(key)?, FeatureKind::Image | FeatureKind::Video) {
            return Err(RequestError::Usage(format!(
                "--features {spec}: \"{key}\" is not a camera (an `image` or `video` feature) of \
                 the dataset {}; a numeric column is `state:{key}`",
                ds.root().display()
            )));
        }
        return Ok(FrameFeatures::Image(key.to_owned()));
    }
    if let Some(column) = spec.strip_prefix("state:") {
        kind(column)?;
        numeric(ds, "--features", column)?;
        return Ok(FrameFeatures::Vector(column.to_owned()));
    }
    match spec {
        "none" => return Ok(FrameFeatures::None),
        "auto" => {}
        key => {
            return match ds.feature(key).map(|f| f.kind) {
                Some(FeatureKind::Numeric) => Ok(FrameFeatures::Vector(key.to_owned())),
                // Images and videos (cameras).
                Some(_) => Ok(FrameFeatures::Image(key.to_owned())),
                None => Err(undeclared(key)),
            };
        }
    }
    if let Some(camera) = ds.first_camera() {
        return Ok(FrameFeatures::Image(camera));
    }
    match state_feature {
        Some(s)
            if ds
                .feature(s)
                .is_some_and(|f| f.kind == FeatureKind::Numeric) =>
        {
            Ok(FrameFeatures::Vector(s.to_owned()))
        }
        _ => Err(RequestError::Input(format!(
            "--features auto: {} has no `image` feature, no `video` feature whose files are all \
             present and open, and no numeric state feature \"{}\"; pass --features \
             state:COLUMN (and --state-feature, --action-feature for non-standard keys); \
             declared features: {}",
            ds.root().display(),
            state_feature.unwrap_or("none"),
            ds.describe_features()
        ))),
    }
}

/// Notes for the cameras `--features auto` passed over: one per `video` feature whose files are
/// missing or do not open, naming the feature, the reason and what was used instead. Empty
/// unless `spec` is `auto` and the features chosen (`chosen`) are not a camera of the dataset's
/// `image` features (those come before any video, so no video was considered).
pub fn auto_skipped_videos(spec: &str, ds: &LeRobotDataset, chosen: &FrameFeatures) -> Vec<String> {
    if spec != "auto" {
        return Vec::new();
    }
    if let FrameFeatures::Image(key) = chosen
        && ds.feature(key).map(|f| f.kind) == Some(FeatureKind::Image)
    {
        return Vec::new();
    }
    ds.undecodable_video_features()
        .into_iter()
        .map(|(name, why)| {
            format!(
                "note: --features auto passed over the video feature \"{name}\" ({why}); \
                 the frame features are {}",
                chosen.describe()
            )
        })
        .collect()
}

/// A warning when `components` asks for more than the frames fitted can give, found before any
/// frame is read: `n` rows span at most `n − 1` directions, and the component fit is capped
/// there ([`max_components`]). The feature's width also caps it, as documented, without a
/// warning. `None` when the metadata does not give the frame count.
pub(crate) fn component_cap_warning(
    components: usize,
    ds: &LeRobotDataset,
    features: &FrameFeatures,
    encoder: &Encoder,
) -> Option<String> {
    let width = match features {
        FrameFeatures::Image(_) => encoder.dim(),
        FrameFeatures::Vector(c) => ds
            .feature(c)
            .map_or(1, roboaudit_data::lerobot::Feature::width),
        FrameFeatures::None => return None,
    };
    let lengths: Option<u64> = ds.episodes().iter().map(|e| e.length).sum();
    let frames = lengths
        .or(ds.info().total_frames)
        .and_then(|f| usize::try_from(f).ok())?;
    let rows = component_rows(frames, LoadOptions::push_defaults().component_frames);
    let cap = max_components(rows, width);
    (components > cap && cap < width).then(|| {
        format!(
            "--components {components} capped at {cap}: the {rows} frames the components are fitted on span at most {cap} principal directions"
        )
    })
}
