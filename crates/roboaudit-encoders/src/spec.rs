//! Representations named as text (seed 000 §II: the embeddings the nearest-neighbour rules
//! select by): `pixels32`, `structural`, `resnet18:PATH[,side=N]`,
//! `dinov2:PATH[,side=N][,heads=N]`, `clip:PATH[,heads=N][,side=N]`, `policy_encoder:DIR` (a
//! Policy+DR checkpoint folder, `RUN/policies/cNNN/` of `retrieval collect --mechanism policy-dr`:
//! seed 000 §II "policy encoder"), each optionally with `,name=NAME` (the representation's name
//! in the embeddings file; default the kind: `pixels32`, `resnet18`, `dinov2`, `clip`,
//! `policy_encoder`). The text is parsed and its settings checked before any file is
//! read; [`RepresentationSpec::load`] reads the weights.

use std::path::PathBuf;
use std::sync::Arc;

use roboaudit_data::lerobot::Rgb8Image;

use crate::EncoderError;
use crate::clip::{ClipEncoder, ClipOptions};
use crate::dinov2::{Dinov2Encoder, Dinov2Options};
use crate::image::area_resample;
use crate::policy::{POLICY_ENCODER, PolicyEncoder};
use crate::resnet::{Resnet18Encoder, ResnetOptions};

/// The accepted forms, for error messages.
pub const SPEC_FORMS: &str = "pixels32, structural, resnet18:PATH[,side=N], \
     dinov2:PATH[,side=N][,heads=N], clip:PATH[,heads=N][,side=N] or policy_encoder:DIR \
     (a policy checkpoint folder; each may add ,name=NAME)";

/// Name of the raw-pixel representation (the harness's `pixels32`).
pub const PIXELS32: &str = "pixels32";
/// Name of the structural representation (object poses, computed by a harness from its scenes).
pub const STRUCTURAL: &str = "structural";
/// Side of the raw-pixel representation.
pub const PIXELS32_SIDE: usize = 32;

/// A representation choice, parsed and checked before any file is read.
#[derive(Debug, Clone, PartialEq)]
pub enum RepresentationSpec {
    /// The frame area-resampled to 32 × 32, RGB in `[0, 1]`, height-width-channel order (3,072
    /// values). For a 64 × 64 frame this is the 2 × 2 average pooling the testbed harness
    /// (`retrieval collect`) writes.
    Pixels32 {
        /// Name in the embeddings file.
        name: String,
    },
    /// The structural representation: object poses that only a harness knows (`retrieval
    /// collect` writes it); it cannot be computed from images.
    Structural,
    /// A ResNet-18 checkpoint ([`crate::resnet`]).
    Resnet18 {
        /// The safetensors file.
        path: PathBuf,
        /// Input side.
        options: ResnetOptions,
        /// Name in the embeddings file.
        name: String,
    },
    /// A DINOv2 checkpoint ([`crate::dinov2`]).
    Dinov2 {
        /// The safetensors file.
        path: PathBuf,
        /// Input side and heads.
        options: Dinov2Options,
        /// Name in the embeddings file.
        name: String,
    },
    /// A CLIP vision checkpoint ([`crate::clip`]).
    Clip {
        /// The safetensors file.
        path: PathBuf,
        /// Heads and input side.
        options: ClipOptions,
        /// Name in the embeddings file.
        name: String,
    },
    /// The visual feature of a Policy+DR policy checkpoint ([`crate::policy`]).
    Policy {
        /// The checkpoint folder (`model.safetensors` + `config.json`).
        dir: PathBuf,
        /// Name in the embeddings file.
        name: String,
    },
}

/// Settings given after the path.
#[derive(Default)]
struct Settings {
    side: Option<usize>,
    heads: Option<usize>,
    name: Option<String>,
}

fn settings<'a>(
    parts: impl Iterator<Item = &'a str>,
    allowed: &[&str],
    usage: &dyn Fn(String) -> EncoderError,
) -> Result<Settings, EncoderError> {
    let mut s = Settings::default();
    for part in parts {
        let (key, value) = part
            .split_once('=')
            .ok_or_else(|| usage(format!("\"{part}\" is not KEY=VALUE")))?;
        if !allowed.contains(&key) {
            return Err(usage(format!(
                "unknown setting \"{key}\" ({})",
                allowed.join(", ")
            )));
        }
        let number = || {
            value
                .parse::<usize>()
                .map_err(|_| usage(format!("{key}={value} is not a whole number")))
        };
        let twice = || usage(format!("{key} given twice"));
        match key {
            "side" if s.side.is_some() => return Err(twice()),
            "side" => s.side = Some(number()?),
            "heads" if s.heads.is_some() => return Err(twice()),
            "heads" => s.heads = Some(number()?),
            _ if s.name.is_some() => return Err(twice()),
            _ => {
                let ok = !value.is_empty()
                    && value
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
                if !ok {
                    return Err(usage(format!(
                        "name={value}: use letters, digits, '_', '-' or '.'"
                    )));
                }
                s.name = Some(value.to_owned());
            }
        }
    }
    Ok(s)
}

impl RepresentationSpec {
    /// Parses one of [`SPEC_FORMS`] and checks its settings.
    ///
    /// # Errors
    /// [`EncoderError::InvalidConfig`] naming the text for an unknown kind, a missing path, a
    /// malformed or repeated setting, or a setting out of range.
    pub fn parse(spec: &str) -> Result<Self, EncoderError> {
        let usage = |why: String| {
            EncoderError::InvalidConfig(format!("{spec}: {why}; expected {SPEC_FORMS}"))
        };
        // `KIND:PATH,SETTINGS`, or `KIND,SETTINGS` for a kind without a path (`pixels32,name=N`):
        // the comma stays at the head of the rest, where the path would be.
        let (kind, rest) = match spec.find([':', ',']) {
            Some(i) if spec[i..].starts_with(':') => (&spec[..i], &spec[i + 1..]),
            Some(i) => (&spec[..i], &spec[i..]),
            None => (spec, ""),
        };
        let mut parts = rest.split(',');
        let path = parts.next().unwrap_or_default();
        match kind {
            "pixels32" | "structural" => {
                if kind == "structural" && !rest.is_empty() {
                    return Err(usage("structural takes no settings".into()));
                }
                if kind == "structural" {
                    return Ok(Self::Structural);
                }
                // `pixels32` or `pixels32:,name=N` / `pixels32:name=N`.
                let all = rest.split(',').filter(|p| !p.is_empty());
                let s = settings(all, &["name"], &usage)?;
                return Ok(Self::Pixels32 {
                    name: s.name.unwrap_or_else(|| PIXELS32.to_owned()),
                });
            }
            "resnet18" | "dinov2" | "clip" | POLICY_ENCODER => {}
            _ => return Err(usage("unknown representation".into())),
        }
        if path.is_empty() {
            let what = if kind == POLICY_ENCODER {
                "no checkpoint folder"
            } else {
                "no weights file"
            };
            return Err(usage(what.into()));
        }
        let path = PathBuf::from(path);
        let check = |e: EncoderError| match e {
            EncoderError::InvalidConfig(m) => usage(m),
            other => usage(other.to_string()),
        };
        Ok(match kind {
            "resnet18" => {
                let s = settings(parts, &["side", "name"], &usage)?;
                let options = ResnetOptions {
                    side: s.side.unwrap_or(crate::resnet::DEFAULT_SIDE),
                };
                options.validate().map_err(check)?;
                Self::Resnet18 {
                    path,
                    options,
                    name: s.name.unwrap_or_else(|| kind.to_owned()),
                }
            }
            "dinov2" => {
                let s = settings(parts, &["side", "heads", "name"], &usage)?;
                let options = Dinov2Options {
                    side: s.side.unwrap_or(crate::dinov2::DEFAULT_SIDE),
                    heads: s.heads,
                };
                options.validate().map_err(check)?;
                Self::Dinov2 {
                    path,
                    options,
                    name: s.name.unwrap_or_else(|| kind.to_owned()),
                }
            }
            POLICY_ENCODER => {
                let s = settings(parts, &["name"], &usage)?;
                Self::Policy {
                    dir: path,
                    name: s.name.unwrap_or_else(|| kind.to_owned()),
                }
            }
            _ => {
                let s = settings(parts, &["side", "heads", "name"], &usage)?;
                if s.heads == Some(0) {
                    return Err(usage("heads=0: give at least one attention head".into()));
                }
                Self::Clip {
                    path,
                    options: ClipOptions {
                        heads: s.heads,
                        side: s.side,
                    },
                    name: s.name.unwrap_or_else(|| kind.to_owned()),
                }
            }
        })
    }

    /// The representation's name in the embeddings file.
    pub fn name(&self) -> &str {
        match self {
            Self::Pixels32 { name }
            | Self::Resnet18 { name, .. }
            | Self::Dinov2 { name, .. }
            | Self::Clip { name, .. }
            | Self::Policy { name, .. } => name,
            Self::Structural => STRUCTURAL,
        }
    }

    /// Loads the encoder (reads the weights file or checkpoint folder, if any).
    ///
    /// # Errors
    /// [`EncoderError::InvalidConfig`] for `structural` (it is not computed from images); the
    /// encoders' load errors (weights file missing, not safetensors, of the wrong architecture,
    /// a tensor missing or of the wrong shape, an input size the weights cannot take; a policy
    /// checkpoint folder without its files or whose config is not a policy's).
    pub fn load(&self) -> Result<ImageEncoder, EncoderError> {
        Ok(match self {
            Self::Pixels32 { .. } => ImageEncoder::Pixels {
                side: PIXELS32_SIDE,
            },
            Self::Structural => {
                return Err(EncoderError::InvalidConfig(
                    "structural: object poses come from the harness that built the scenes \
                     (`retrieval collect` writes them), not from images"
                        .into(),
                ));
            }
            Self::Resnet18 { path, options, .. } => {
                ImageEncoder::Resnet18(Arc::new(Resnet18Encoder::load(path, options)?))
            }
            Self::Dinov2 { path, options, .. } => {
                ImageEncoder::Dinov2(Arc::new(Dinov2Encoder::load(path, options)?))
            }
            Self::Clip { path, options, .. } => {
                ImageEncoder::Clip(Arc::new(ClipEncoder::load(path, options)?))
            }
            Self::Policy { dir, .. } => ImageEncoder::Policy(Arc::new(PolicyEncoder::load(dir)?)),
        })
    }
}

/// A loaded image encoder of any kind; shared, so cloning is cheap.
#[derive(Debug, Clone)]
pub enum ImageEncoder {
    /// Area-resampled raw pixels, `side × side × 3`, values in `[0, 1]`.
    Pixels {
        /// Output side in pixels.
        side: usize,
    },
    /// A ResNet-18.
    Resnet18(Arc<Resnet18Encoder>),
    /// A DINOv2 ViT/14.
    Dinov2(Arc<Dinov2Encoder>),
    /// A CLIP image tower.
    Clip(Arc<ClipEncoder>),
    /// A Policy+DR policy's visual encoder.
    Policy(Arc<PolicyEncoder>),
}

impl ImageEncoder {
    /// Feature width.
    pub fn dim(&self) -> usize {
        match self {
            Self::Pixels { side } => side * side * 3,
            Self::Resnet18(e) => e.dim(),
            Self::Dinov2(e) => e.dim(),
            Self::Clip(e) => e.dim(),
            Self::Policy(e) => e.dim(),
        }
    }

    /// An identifier of the encoder and its settings, e.g. `pixels32`, `resnet18-r18-224`.
    pub fn id(&self) -> String {
        match self {
            Self::Pixels { side } => format!("pixels{side}"),
            Self::Resnet18(e) => e.id().to_owned(),
            Self::Dinov2(e) => e.id().to_owned(),
            Self::Clip(e) => e.id().to_owned(),
            Self::Policy(e) => e.id().to_owned(),
        }
    }

    /// 16 hex digits of the weights file's SHA-256, or `none`.
    pub fn weights_hash(&self) -> &str {
        match self {
            Self::Pixels { .. } => "none",
            Self::Resnet18(e) => e.weights_hash(),
            Self::Dinov2(e) => e.weights_hash(),
            Self::Clip(e) => e.weights_hash(),
            Self::Policy(e) => e.weights_hash(),
        }
    }

    /// Encodes one image into [`dim`](Self::dim) finite values.
    ///
    /// # Errors
    /// [`EncoderError::InvalidImage`] for an empty image; the networks' [`EncoderError::Candle`]
    /// and [`EncoderError::Numerical`].
    pub fn encode(&self, image: &Rgb8Image) -> Result<Vec<f32>, EncoderError> {
        match self {
            Self::Pixels { side } => area_resample(image, *side),
            Self::Resnet18(e) => e.encode(image),
            Self::Dinov2(e) => e.encode(image),
            Self::Clip(e) => e.encode(image),
            Self::Policy(e) => e.encode(image),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn specs_parse_with_defaults_and_settings_are_checked() {
        assert_eq!(
            RepresentationSpec::parse("pixels32").unwrap().name(),
            "pixels32"
        );
        assert_eq!(
            RepresentationSpec::parse("structural").unwrap(),
            RepresentationSpec::Structural
        );
        assert_eq!(
            RepresentationSpec::parse("resnet18:/w/r.safetensors,side=64").unwrap(),
            RepresentationSpec::Resnet18 {
                path: "/w/r.safetensors".into(),
                options: ResnetOptions { side: 64 },
                name: "resnet18".into()
            }
        );
        assert_eq!(
            RepresentationSpec::parse("dinov2:d.st,heads=2,name=dino_s")
                .unwrap()
                .name(),
            "dino_s"
        );
        for named in ["pixels32,name=px", "pixels32:name=px", "pixels32:,name=px"] {
            assert_eq!(
                RepresentationSpec::parse(named).unwrap().name(),
                "px",
                "{named}"
            );
        }
        assert_eq!(
            RepresentationSpec::parse("policy_encoder:run/policies/c000").unwrap(),
            RepresentationSpec::Policy {
                dir: "run/policies/c000".into(),
                name: "policy_encoder".into()
            }
        );
        assert_eq!(
            RepresentationSpec::parse("policy_encoder:p,name=pe")
                .unwrap()
                .name(),
            "pe"
        );
        assert!(matches!(
            RepresentationSpec::parse("clip:c.st,heads=2").unwrap(),
            RepresentationSpec::Clip {
                options: ClipOptions {
                    heads: Some(2),
                    side: None
                },
                ..
            }
        ));
        for bad in [
            "resnet50:x",
            "resnet18:",
            "resnet18:x,side=16",
            "dinov2:x,side=15",
            "dinov2:x,side=28,side=28",
            "clip:x,heads=0",
            "clip:x,depth=2",
            "clip:x,name=a b",
            "structural:x",
            "structural,name=s",
            "resnet18,name=r",
            "pixels32:side=3",
            "pixels32,side=3",
            "policy_encoder:",
            "policy_encoder,name=p",
            "policy_encoder:p,side=64",
        ] {
            let e = RepresentationSpec::parse(bad).unwrap_err();
            assert!(
                matches!(&e, EncoderError::InvalidConfig(m) if m.starts_with(bad)),
                "{bad}: {e}"
            );
        }
        assert!(matches!(
            RepresentationSpec::Structural.load().unwrap_err(),
            EncoderError::InvalidConfig(_)
        ));
    }
}
