//! Frozen pretrained image encoders loaded from local safetensors files, and the `embed`
//! pipeline that turns images into the `embeddings` file the retrieval audit reads (seed 000 §II:
//! the rules select by nearest neighbour in raw 32 × 32 pixels, ImageNet ResNet-18, DINOv2 and
//! CLIP embeddings; seed 003 §3.4: FQE's frozen DINOv2 features).
//!
//! | encoder | weights layout | input | normalization | feature |
//! |---|---|---|---|---|
//! | [`resnet`] | torchvision `resnet18().state_dict()` | `side²`, default 224 | ImageNet | 512: global average pool of `layer4`, before `fc` |
//! | [`clip`] | transformers `CLIPModel` vision tower (or `CLIPVisionModel`) | the checkpoint's (224 for ViT-B/32) | CLIP | width (768 for ViT-B/32): pooled output, no projection |
//! | [`dinov2`] | torch-hub `dinov2_vits14` / `vitb14` | `side²`, multiple of 14, default 224 | ImageNet | width (384 / 768): final-norm class token |
//! | [`policy`] | a `retrieval collect --mechanism policy-dr` checkpoint folder (`model.safetensors` + `config.json`) | 32² (exact `k × k` pooling of a `k·32` square) | `[0, 1]`, then − 0.5 | `feature` (64 by default): the Policy+DR network's visual feature |
//!
//! Every pretrained encoder area-resamples the whole frame to its square input ([`image`]); the
//! policy encoder takes a square whose side is a multiple of 32 and pools it exactly, as the
//! harness that trained it does ([`policy`]). Nothing is
//! downloaded; tests write seeded random checkpoints of each layout (`write_random_*`, same
//! seed ⇒ same bytes), and `tests/reference.rs` checks each encoder on such a checkpoint against
//! PyTorch (`scripts/encoders_reference.py`). Weights files of the wrong architecture, a missing
//! tensor, a wrong shape or type, and an input size the weights cannot take are typed errors
//! ([`EncoderError`]) naming the file and the tensor.
//!
//! The encoders run on the CPU through candle-transformers 0.11.1, one image per forward pass,
//! images in parallel on rayon's pool: a feature depends on its image alone.

pub mod clip;
pub mod dinov2;
pub mod embed;
mod embed_summary;
mod error;
pub mod frozen;
pub mod image;
pub mod policy;
pub mod resnet;
pub mod spec;
pub mod weights;

pub use clip::{ClipEncoder, ClipOptions};
pub use dinov2::{Dinov2Encoder, Dinov2Options};
pub use embed::{EmbedSource, EmbedSummary, embed};
pub use embed_summary::{EmbedOptions, SourceError};
pub use error::EncoderError;
pub use frozen::{Backbone, Frozen};
pub use policy::PolicyEncoder;
pub use resnet::{Resnet18Encoder, ResnetOptions};
pub use spec::{ImageEncoder, RepresentationSpec};
