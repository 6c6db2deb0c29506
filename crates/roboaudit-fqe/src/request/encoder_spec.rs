//! The frozen image encoder of a fit named as text: `raw32` (raw pixels 32×32, methods document
//! §3) or `dinov2:PATH[,side=N][,heads=N]` (a DINOv2 ViT/14 checkpoint from a local safetensors
//! file, seed 003 §3.4). The text is parsed and its settings checked before any file is read;
//! the weights file is read before the dataset.

use std::path::PathBuf;

use super::RequestError;
use crate::{Dinov2Options, Encoder, FqeError};

/// An encoder choice, parsed (and its settings checked) before any file is read.
#[derive(Debug, Clone, PartialEq)]
pub enum EncoderSpec {
    /// Raw pixels 32×32.
    Raw32,
    /// A DINOv2 checkpoint file and its settings.
    Dinov2 {
        /// The safetensors file.
        path: PathBuf,
        /// Input side and heads.
        options: Dinov2Options,
    },
}

impl EncoderSpec {
    /// Parses `raw32` or `dinov2:PATH[,side=N][,heads=N]`.
    ///
    /// # Errors
    /// [`RequestError::Usage`] for a malformed value or settings out of range, naming the text.
    pub fn parse(spec: &str) -> Result<Self, RequestError> {
        let usage = |why: String| {
            RequestError::Usage(format!(
                "--encoder {spec}: {why}; expected raw32 or dinov2:PATH[,side=N][,heads=N]"
            ))
        };
        if spec == "raw32" {
            return Ok(Self::Raw32);
        }
        let Some(rest) = spec.strip_prefix("dinov2:") else {
            return Err(usage("unknown encoder".into()));
        };
        let mut parts = rest.split(',');
        let path = parts.next().unwrap_or_default();
        if path.is_empty() {
            return Err(usage("no weights file".into()));
        }
        let mut options = Dinov2Options::default();
        let (mut side, mut heads) = (None, None);
        for part in parts {
            let (key, value) = part
                .split_once('=')
                .ok_or_else(|| usage(format!("\"{part}\" is not KEY=VALUE")))?;
            let slot = match key {
                "side" => &mut side,
                "heads" => &mut heads,
                _ => return Err(usage(format!("unknown setting \"{key}\" (side, heads)"))),
            };
            if slot.is_some() {
                return Err(usage(format!("{key} given twice")));
            }
            *slot = Some(
                value
                    .parse::<usize>()
                    .map_err(|_| usage(format!("{key}={value} is not a whole number")))?,
            );
        }
        if let Some(s) = side {
            options.side = s;
        }
        options.heads = heads;
        options.validate().map_err(|e| match FqeError::from(e) {
            FqeError::InvalidConfig(m) => usage(m),
            other => usage(other.to_string()),
        })?;
        Ok(Self::Dinov2 {
            path: PathBuf::from(path),
            options,
        })
    }

    /// Loads the encoder.
    ///
    /// # Errors
    /// [`RequestError::Input`] for a weights file that is missing, unreadable or not a DINOv2
    /// checkpoint (naming the file); [`RequestError::Usage`] for heads that do not fit its width.
    pub fn load(&self) -> Result<Encoder, RequestError> {
        match self {
            Self::Raw32 => Ok(Encoder::raw32()),
            Self::Dinov2 { path, options } => Encoder::dinov2(path, options).map_err(|e| match e {
                FqeError::Io { .. } | FqeError::Weights { .. } => {
                    RequestError::Input(format!("--encoder: {}", roboaudit_types::error_chain(&e)))
                }
                FqeError::InvalidConfig(m) => RequestError::Usage(format!("--encoder: {m}")),
                other => RequestError::Fqe(other),
            }),
        }
    }
}
