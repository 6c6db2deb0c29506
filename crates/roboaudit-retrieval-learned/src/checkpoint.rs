//! Checkpoint folders: `model.safetensors` (the tensors of [`crate::model::NAMES`] and the
//! normalization) and `config.json` ([`PolicyConfig`]), written atomically (temp file + rename)
//! and checked on load: schema, declared input and output sizes, every tensor's name, shape,
//! dtype and finiteness.

use std::io::Write;
use std::path::Path;

use sha2::{Digest, Sha256};

use crate::config::{CONFIG_FILE, WEIGHTS_FILE};
use crate::error::{PolicyError, Result};
use crate::model::{Norm, Weights};
use crate::train::Trained;

fn write_err(path: &Path, e: impl std::fmt::Display) -> PolicyError {
    PolicyError::Write {
        path: path.display().to_string(),
        message: e.to_string(),
    }
}

fn temp_in(dir: &Path, path: &Path) -> Result<tempfile::NamedTempFile> {
    // A checkpoint is shared like the rest of the run: the mode of a file the user creates.
    roboaudit_data::atomic::result_file_builder()
        .prefix(".tmp-")
        .tempfile_in(dir)
        .map_err(|e| write_err(path, e))
}

/// Saves `t` into folder `dir` (created if missing): weights first, then the config.
///
/// # Errors
/// [`PolicyError::Write`] naming the file.
pub fn save(dir: &Path, t: &Trained) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| write_err(dir, e))?;
    let weights = dir.join(WEIGHTS_FILE);
    let tmp = temp_in(dir, &weights)?;
    // safetensors writes through its own owner-only temporary file renamed onto `tmp`: the
    // result is given back the mode `tmp` was created with.
    let mode = tmp
        .as_file()
        .metadata()
        .map_err(|e| write_err(&weights, e))?
        .permissions();
    candle_core::safetensors::save(&t.weights.named(&t.norm), tmp.path())
        .map_err(|e| write_err(&weights, e))?;
    std::fs::set_permissions(tmp.path(), mode).map_err(|e| write_err(&weights, e))?;
    tmp.persist(&weights)
        .map_err(|e| write_err(&weights, e.error))?;
    let json = serde_json::to_vec_pretty(&t.config).map_err(|e| write_err(dir, e))?;
    let cpath = dir.join(CONFIG_FILE);
    let mut tmp = temp_in(dir, &cpath)?;
    tmp.write_all(&json).map_err(|e| write_err(&cpath, e))?;
    tmp.persist(&cpath)
        .map_err(|e| write_err(&cpath, e.error))?;
    Ok(())
}

/// SHA-256 (64 hex digits) of the file `name` in checkpoint folder `dir`: identifies exactly
/// which weights (`model.safetensors`) and config an audit judged.
///
/// # Errors
/// [`PolicyError::Checkpoint`] when the file cannot be read.
pub fn file_sha256(dir: &Path, name: &str) -> Result<String> {
    let path = dir.join(name);
    let bytes = std::fs::read(&path).map_err(|e| PolicyError::checkpoint(&path, e.to_string()))?;
    Ok(format!("{:x}", Sha256::digest(&bytes)))
}

/// Loads and checks the checkpoint in `dir` ([`roboaudit_encoders::policy::load_checkpoint`]:
/// the one loader of policy checkpoints, shared with `embed`'s policy encoder).
///
/// # Errors
/// [`PolicyError::Load`] naming the file: missing or unparsable, another schema, input or
/// output size, training settings out of range, a missing, extra, mistyped, misshapen or
/// non-finite tensor.
pub fn load(dir: &Path) -> Result<Trained> {
    let ck = roboaudit_encoders::policy::load_checkpoint(dir)?;
    let [low_mean, low_std, target_mean, target_std] = ck.norm;
    Ok(Trained {
        config: ck.config,
        weights: Weights {
            tensors: ck.tensors,
        },
        norm: Norm {
            low_mean,
            low_std,
            target_mean,
            target_std,
        },
    })
}
