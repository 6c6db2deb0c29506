//! Just enough MP4 parsing to name the codec of a video file (its first sample entry), so that
//! `inspect` can compare it with the codec `meta/info.json` declares. Nothing is decoded.

use std::path::Path;

/// The codec of the first `stsd` sample entry, as LeRobot names codecs (`av1`, `h264`,
/// `hevc`, `vp9`, `mpeg4`), or the raw four-character code for others; `None` when the file
/// cannot be read or has no sample description.
pub(crate) fn codec_of(file: &Path) -> Option<String> {
    let bytes = std::fs::read(file).ok()?;
    let at = bytes.windows(4).position(|w| w == b"stsd")?;
    // After the box type: version+flags (4), entry count (4), entry size (4), then the format.
    let fourcc = bytes.get(at + 16..at + 20)?;
    let code = String::from_utf8_lossy(fourcc).into_owned();
    Some(
        match code.as_str() {
            "av01" => "av1",
            "avc1" | "avc3" => "h264",
            "hvc1" | "hev1" => "hevc",
            "vp09" => "vp9",
            "mp4v" => "mpeg4",
            other => other,
        }
        .to_owned(),
    )
}

/// Whether a declared codec name and a found one mean the same codec (`libsvtav1` = `av1`).
pub(crate) fn same_codec(declared: &str, found: &str) -> bool {
    let norm = |c: &str| match c.to_ascii_lowercase().as_str() {
        "libsvtav1" | "libaom-av1" | "av01" => "av1".to_owned(),
        "libx264" | "avc" | "avc1" => "h264".to_owned(),
        "libx265" | "h265" | "hvc1" => "hevc".to_owned(),
        other => other.to_owned(),
    };
    norm(declared) == norm(found)
}
