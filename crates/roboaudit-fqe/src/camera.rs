//! The frames of a camera feature, however the dataset stores them: an `image` feature's PNG
//! cells (key: FNV-1a of the PNG bytes) or a `video` feature's MP4 frames picked by timestamp
//! with LeRobot's rule (key: FNV-1a of the MP4 file's content hash and the frame's time in it).
//! Either key identifies the frame's content across datasets and runs, which is what the
//! feature cache needs; only the frames a caller wants are decoded.

use roboaudit_data::lerobot::{DEFAULT_TOLERANCE_S, FeatureKind, LeRobotDataset, Rgb8Image};

use crate::FqeError;
use crate::cache::fnv1a64;

/// A frame before decoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FrameRef {
    /// Global `index` of the row.
    pub index: i64,
    /// `episode_index` of the row.
    pub episode_index: i64,
    /// Content key for the feature cache.
    pub key: u64,
}

/// Calls `f` with every frame of `feature` that `wanted` accepts, decoded to RGB8. Image
/// features: `wanted` and `f` alternate frame by frame in data-file order. Video features:
/// `wanted` sees every frame of one MP4 file, then `f` gets the wanted ones in time order,
/// the file decoded once.
pub(crate) fn for_each_camera_frame(
    ds: &LeRobotDataset,
    feature: &str,
    wanted: &mut dyn FnMut(&FrameRef) -> bool,
    f: &mut dyn FnMut(&FrameRef, Rgb8Image) -> Result<(), FqeError>,
) -> Result<(), FqeError> {
    if ds.feature(feature).map(|f| f.kind) == Some(FeatureKind::Video) {
        return ds.for_each_video_frame::<FqeError>(
            feature,
            DEFAULT_TOLERANCE_S,
            &mut |id| {
                wanted(&FrameRef {
                    index: id.index,
                    episode_index: id.episode_index,
                    key: id.key,
                })
            },
            &mut |id, image| {
                f(
                    &FrameRef {
                        index: id.index,
                        episode_index: id.episode_index,
                        key: id.key,
                    },
                    image,
                )
            },
        );
    }
    ds.for_each_image::<FqeError>(feature, &mut |img| {
        let r = FrameRef {
            index: img.index,
            episode_index: img.episode_index,
            key: fnv1a64(img.bytes),
        };
        if wanted(&r) {
            f(&r, img.decode()?)?;
        }
        Ok(())
    })
}
