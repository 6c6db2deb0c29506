//! Checkpoint folders: `model.safetensors` (the tensors of [`crate::model::names`] of the
//! checkpoint's family plus the normalization) and `config.json` ([`LearnedConfig`]), written atomically (temp file + rename)
//! and checked on load: schema, family, every tensor name, shape, dtype and finiteness.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use candle_core::{DType, Device, Tensor};
use roboaudit_memory_harness::ACTION_DIM;
use roboaudit_types::seed::Fnv1a;

use crate::config::{CONFIG_FILE, CONFIG_SCHEMA, LearnedConfig, WEIGHTS_FILE, input_dim};
use crate::error::LearnedError;
use crate::model::{ACTION_SCALE, Dims, INPUT_MEAN, INPUT_STD, Norm, Weights, names};
use crate::train::Trained;

fn write_err(path: &Path, e: impl std::fmt::Display) -> LearnedError {
    LearnedError::Write {
        path: path.display().to_string(),
        message: e.to_string(),
    }
}

fn temp_in(dir: &Path, path: &Path) -> Result<tempfile::NamedTempFile, LearnedError> {
    // A checkpoint is shared like the rest of the run: the mode of a file the user creates.
    roboaudit_data::atomic::result_file_builder()
        .prefix(".tmp-")
        .tempfile_in(dir)
        .map_err(|e| write_err(path, e))
}

/// Writes `bytes` to `path` atomically (a temp file beside it, then a rename).
///
/// # Errors
/// [`LearnedError::Write`] naming the file.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), LearnedError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut tmp = temp_in(dir, path)?;
    tmp.write_all(bytes).map_err(|e| write_err(path, e))?;
    tmp.persist(path).map_err(|e| write_err(path, e.error))?;
    Ok(())
}

/// Saves `t` into folder `dir` (created if missing): weights first, then the config.
///
/// # Errors
/// [`LearnedError::Write`] naming the file.
pub fn save(dir: &Path, t: &Trained) -> Result<(), LearnedError> {
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
    candle_core::safetensors::save(&t.weights.named(t.config.family, &t.norm), tmp.path())
        .map_err(|e| write_err(&weights, e))?;
    std::fs::set_permissions(tmp.path(), mode).map_err(|e| write_err(&weights, e))?;
    tmp.persist(&weights)
        .map_err(|e| write_err(&weights, e.error))?;
    let json = serde_json::to_vec_pretty(&t.config).map_err(|e| write_err(dir, e))?;
    write_atomic(&dir.join(CONFIG_FILE), &json)
}

/// FNV-1a of a checkpoint's weights file (hex): identifies the weights a qualification used.
///
/// # Errors
/// [`LearnedError::Checkpoint`] when the file cannot be read.
pub fn weights_hash(dir: &Path) -> Result<String, LearnedError> {
    let path = dir.join(WEIGHTS_FILE);
    let bytes = std::fs::read(&path).map_err(|e| LearnedError::checkpoint(&path, e.to_string()))?;
    let mut h = Fnv1a::new();
    h.write(&bytes);
    Ok(format!("{:016x}", h.finish()))
}

fn take(
    map: &mut HashMap<String, Tensor>,
    path: &Path,
    name: &str,
    shape: &[usize],
) -> Result<Tensor, LearnedError> {
    let t = map.remove(name).ok_or_else(|| {
        LearnedError::checkpoint(
            path,
            format!(
                "tensor `{name}` is missing (another architecture than {CONFIG_FILE} declares?)"
            ),
        )
    })?;
    if t.dtype() != DType::F32 {
        return Err(LearnedError::checkpoint(
            path,
            format!("tensor `{name}` is {:?}, expected f32", t.dtype()),
        ));
    }
    if t.dims() != shape {
        return Err(LearnedError::checkpoint(
            path,
            format!(
                "tensor `{name}` has shape {:?}, expected {shape:?} from {CONFIG_FILE}",
                t.dims()
            ),
        ));
    }
    Ok(t)
}

/// Loads and checks the checkpoint in `dir`.
///
/// # Errors
/// [`LearnedError::Checkpoint`] naming the file: missing or unparsable, another schema or
/// family, a missing, extra, mistyped or misshapen tensor, non-finite weights.
pub fn load(dir: &Path) -> Result<Trained, LearnedError> {
    let cpath: PathBuf = dir.join(CONFIG_FILE);
    let text = std::fs::read_to_string(&cpath)
        .map_err(|e| LearnedError::checkpoint(&cpath, e.to_string()))?;
    let config: LearnedConfig = serde_json::from_str(&text).map_err(|e| {
        LearnedError::checkpoint(
            &cpath,
            format!(
                "not a learned-policy config (line {}, column {}): {e}",
                e.line(),
                e.column()
            ),
        )
    })?;
    if config.schema != CONFIG_SCHEMA {
        return Err(LearnedError::checkpoint(
            &cpath,
            format!("schema `{}`, expected `{CONFIG_SCHEMA}`", config.schema),
        ));
    }
    config
        .train
        .validate()
        .map_err(|e| LearnedError::checkpoint(&cpath, e.to_string()))?;
    if config.input_dim != input_dim(&config.layout) {
        return Err(LearnedError::checkpoint(
            &cpath,
            format!(
                "input_dim {} does not match the layout's {}",
                config.input_dim,
                input_dim(&config.layout)
            ),
        ));
    }
    config
        .task_kind()
        .map_err(|e| LearnedError::checkpoint(&cpath, e.to_string()))?;
    let wpath = dir.join(WEIGHTS_FILE);
    if !wpath.is_file() {
        return Err(LearnedError::checkpoint(&wpath, "no such file"));
    }
    let mut map = candle_core::safetensors::load(&wpath, &Device::Cpu)
        .map_err(|e| LearnedError::checkpoint(&wpath, format!("not a safetensors file: {e}")))?;
    let dims = Dims::of(&config);
    let family = config.family;
    let shapes = dims.shapes(family);
    let mut tensors = Vec::with_capacity(shapes.len());
    for (name, shape) in names(family).iter().zip(&shapes) {
        tensors.push(take(&mut map, &wpath, name, shape)?);
    }
    let norm = Norm {
        mean: take(&mut map, &wpath, INPUT_MEAN, &[dims.input])?,
        std: take(&mut map, &wpath, INPUT_STD, &[dims.input])?,
        action_scale: take(&mut map, &wpath, ACTION_SCALE, &[ACTION_DIM])?,
    };
    if let Some(extra) = map.keys().min() {
        return Err(LearnedError::checkpoint(
            &wpath,
            format!(
                "unexpected tensor `{extra}` for a {} checkpoint (another architecture?)",
                family.name()
            ),
        ));
    }
    for (name, t) in names(family).iter().zip(&tensors).chain([
        (&INPUT_MEAN, &norm.mean),
        (&INPUT_STD, &norm.std),
        (&ACTION_SCALE, &norm.action_scale),
    ]) {
        let v = t.flatten_all()?.to_vec1::<f32>()?;
        if v.iter().any(|x| !x.is_finite()) {
            return Err(LearnedError::checkpoint(
                &wpath,
                format!("tensor `{name}` holds a non-finite value"),
            ));
        }
    }
    Ok(Trained {
        config,
        weights: Weights { tensors },
        norm,
    })
}
