//! Learned memory policies for the counterfactual memory audit (SPEC.md §2; seed 002 §IV-A):
//! policies trained by behaviour cloning on testbed demonstrations, saved as safetensors and
//! audited through the harness's [`roboaudit_memory_harness::MemoryPolicy`] interface.
//!
//! - Family `recurrent` ([`model`]): a GRU (PyTorch's `GRUCell` equations) over the
//!   observation stream, input = the perception vector plus block–tray distances
//!   ([`episodes::input_of`]); a two-layer head maps `[h ; x_present]` to one action chunk.
//!   Memory = the hidden state, one component `hidden` `[H]` ([`LearnedPolicy`]).
//! - Family `anchor-window` ([`anchor_window`]; Mem-0 style, seed 002 §IV-A, §IV-C2): a
//!   protected anchor embedding of the first observation and a window of the `W` most recent
//!   observation embeddings, attended by the present. Memory = components `anchor` `[D]`
//!   (protected) and `window` `[W, D]`.
//! - [`train`]: demonstrations ([`episodes`]), then full-batch AdamW (backpropagation through
//!   the whole stream for the GRU); CPU, `f32`, seeded (same seed → same weights bytes).
//! - [`checkpoint`]: `model.safetensors` + `config.json`, checked on load.
//! - [`qualify`](mod@qualify): native closed-loop episodes before any audit; a checkpoint below
//!   its registered success rate is refused ([`LearnedError::NotQualified`]).
//!
//! ```no_run
//! use roboaudit_memory_learned::{Family, QualifyConfig, TrainConfig, checkpoint, train};
//! use roboaudit_testbed::TaskKind;
//! let cfg = TrainConfig { demos: 16, steps: 50, ..TrainConfig::default() };
//! let t = train::train(TaskKind::PutBack, Family::Recurrent, &cfg, &QualifyConfig::default(),
//!     &mut |_, _| {}, &mut |_, _| {})?;
//! checkpoint::save(std::path::Path::new("ckpt"), &t)?;
//! let (policy, q) = roboaudit_memory_learned::qualify::open_for_audit(
//!     std::path::Path::new("ckpt"), TaskKind::PutBack)?;
//! println!("native success {}", q.rate);
//! # Ok::<(), roboaudit_memory_learned::LearnedError>(())
//! ```

pub mod anchor_window;
pub mod checkpoint;
pub mod config;
pub mod episodes;
mod error;
pub mod model;
pub mod policy;
pub mod qualify;
pub mod recurrent;
pub mod request;
pub mod train;

pub use config::{Family, LearnedConfig, QualifyConfig, TrainConfig};
pub use error::LearnedError;
pub use policy::LearnedPolicy;
