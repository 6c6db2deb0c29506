//! `roboaudit fqe fit --encoder`: the frozen image encoder, `raw32` (raw pixels 32×32, SPEC §3)
//! or `dinov2:PATH[,side=N][,heads=N]` (a DINOv2 ViT/14 checkpoint from a local safetensors file,
//! seed 003 §3.4). The value is parsed and its settings checked before any file is read (exit 2);
//! the weights file is read before the dataset, and a missing or invalid one is invalid input
//! (exit 3) naming the file.

use std::path::PathBuf;

use anyhow::Result;
use roboaudit_fqe::{Dinov2Options, Encoder, FqeError};

use super::fqe::classify;
use crate::exit::{InvalidInput, Usage};

/// The `--encoder` choice, parsed (and its settings checked) before any file is read.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum EncoderSpec {
    /// Raw pixels 32×32.
    Raw32,
    /// A DINOv2 checkpoint file and its settings.
    Dinov2 {
        path: PathBuf,
        options: Dinov2Options,
    },
}

/// Parses `--encoder raw32|dinov2:PATH[,side=N][,heads=N]` (exit 2 on a malformed value).
pub(super) fn encoder_spec(spec: &str) -> Result<EncoderSpec> {
    let usage = |why: String| -> anyhow::Error {
        Usage(format!(
            "--encoder {spec}: {why}; expected raw32 or dinov2:PATH[,side=N][,heads=N]"
        ))
        .into()
    };
    if spec == "raw32" {
        return Ok(EncoderSpec::Raw32);
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
    options.validate().map_err(|e| match e {
        FqeError::InvalidConfig(m) => usage(m),
        other => usage(other.to_string()),
    })?;
    Ok(EncoderSpec::Dinov2 {
        path: PathBuf::from(path),
        options,
    })
}

/// Loads the encoder: a weights file that is missing, unreadable or not a DINOv2 checkpoint is
/// invalid input (exit 3) naming the file; heads that do not fit its width are a usage error.
pub(super) fn load_encoder(spec: &EncoderSpec) -> Result<Encoder> {
    match spec {
        EncoderSpec::Raw32 => Ok(Encoder::raw32()),
        EncoderSpec::Dinov2 { path, options } => {
            Encoder::dinov2(path, options).map_err(|e| match e {
                FqeError::Io { .. } | FqeError::Weights { .. } => {
                    InvalidInput(format!("--encoder: {e}")).into()
                }
                FqeError::InvalidConfig(m) => Usage(format!("--encoder: {m}")).into(),
                other => classify(other),
            })
        }
    }
}
