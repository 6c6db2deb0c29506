//! Checkpoint folders: `model.safetensors` (the tensors of [`crate::model::NAMES`] and the
//! normalization) and `config.json` ([`PolicyConfig`]), written atomically (temp file + rename)
//! and checked on load: schema, declared input and output sizes, every tensor's name, shape,
//! dtype and finiteness.

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;

use candle_core::{DType, Device, Tensor};
use sha2::{Digest, Sha256};

use crate::config::{
    CONFIG_FILE, CONFIG_SCHEMA, IMAGE_SIDE, LOW_DIM, PolicyConfig, TARGET_DIM, WEIGHTS_FILE,
};
use crate::error::{PolicyError, Result};
use crate::model::{NAMES, NORM_NAMES, Norm, Weights, shapes};
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

fn take(
    map: &mut HashMap<String, Tensor>,
    path: &Path,
    name: &str,
    shape: &[usize],
) -> Result<Tensor> {
    let t = map.remove(name).ok_or_else(|| {
        PolicyError::checkpoint(
            path,
            format!(
                "tensor `{name}` is missing (another architecture than {CONFIG_FILE} declares?)"
            ),
        )
    })?;
    if t.dtype() != DType::F32 {
        return Err(PolicyError::checkpoint(
            path,
            format!("tensor `{name}` is {:?}, expected f32", t.dtype()),
        ));
    }
    if t.dims() != shape {
        return Err(PolicyError::checkpoint(
            path,
            format!(
                "tensor `{name}` has shape {:?}, expected {shape:?} from {CONFIG_FILE}",
                t.dims()
            ),
        ));
    }
    let v = t.flatten_all()?.to_vec1::<f32>()?;
    if v.iter().any(|x| !x.is_finite()) {
        return Err(PolicyError::checkpoint(
            path,
            format!("tensor `{name}` holds a non-finite value"),
        ));
    }
    Ok(t)
}

/// Loads and checks the checkpoint in `dir`.
///
/// # Errors
/// [`PolicyError::Checkpoint`] naming the file: missing or unparsable, another schema, input or
/// output size, training settings out of range, a missing, extra, mistyped, misshapen or
/// non-finite tensor.
pub fn load(dir: &Path) -> Result<Trained> {
    let cpath = dir.join(CONFIG_FILE);
    let text = std::fs::read_to_string(&cpath)
        .map_err(|e| PolicyError::checkpoint(&cpath, e.to_string()))?;
    let config: PolicyConfig = serde_json::from_str(&text).map_err(|e| {
        PolicyError::checkpoint(
            &cpath,
            format!(
                "not a retrieval policy config (line {}, column {}): {e}",
                e.line(),
                e.column()
            ),
        )
    })?;
    if config.schema != CONFIG_SCHEMA {
        return Err(PolicyError::checkpoint(
            &cpath,
            format!("schema `{}`, expected `{CONFIG_SCHEMA}`", config.schema),
        ));
    }
    let sizes = (config.image_side, config.low_dim, config.target_dim);
    if sizes != (IMAGE_SIDE, LOW_DIM, TARGET_DIM) {
        return Err(PolicyError::checkpoint(
            &cpath,
            format!(
                "image side, low-dimensional input and output sizes {sizes:?}, this build reads ({IMAGE_SIDE}, {LOW_DIM}, {TARGET_DIM})"
            ),
        ));
    }
    config
        .train
        .validate()
        .map_err(|e| PolicyError::checkpoint(&cpath, e.to_string()))?;
    let wpath = dir.join(WEIGHTS_FILE);
    if !wpath.is_file() {
        return Err(PolicyError::checkpoint(&wpath, "no such file"));
    }
    let mut map = candle_core::safetensors::load(&wpath, &Device::Cpu)
        .map_err(|e| PolicyError::checkpoint(&wpath, format!("not a safetensors file: {e}")))?;
    let mut tensors = Vec::with_capacity(NAMES.len());
    for (name, shape) in NAMES.iter().zip(shapes(&config.train)) {
        tensors.push(take(&mut map, &wpath, name, &shape)?);
    }
    let norm_shapes = [LOW_DIM, LOW_DIM, TARGET_DIM, TARGET_DIM];
    let mut norm = Vec::with_capacity(4);
    for (name, n) in NORM_NAMES.iter().zip(norm_shapes) {
        norm.push(take(&mut map, &wpath, name, &[n])?);
    }
    if let Some(extra) = map.keys().min() {
        return Err(PolicyError::checkpoint(
            &wpath,
            format!("unexpected tensor `{extra}` (another architecture?)"),
        ));
    }
    let [low_mean, low_std, target_mean, target_std]: [Tensor; 4] = norm
        .try_into()
        .map_err(|_| PolicyError::checkpoint(&wpath, "normalization tensors missing"))?;
    Ok(Trained {
        config,
        weights: Weights { tensors },
        norm: Norm {
            low_mean,
            low_std,
            target_mean,
            target_std,
        },
    })
}
