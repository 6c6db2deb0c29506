//! The dataset stage's finished episodes, one file each in the resume folder, so that a run
//! stopped while recording keeps what it recorded: `episodes/<index, 6 digits>.episode`, written
//! atomically as soon as the episode is recorded and read back by a rerun only when whole and
//! intact (its checksum), and for the planned episode it claims to be (its seed). Floats are
//! stored as their bits, so a kept episode is the very record a new recording would give and the
//! dataset written from it is byte-identical.
//!
//! Layout (little-endian): the magic `RAEPISODE1`, the episode seed (`u64`), the scene id
//! (bytes), the frame count (`u64`), then per frame the scene PNG (bytes), the wrist PNG (`u8`
//! flag, then bytes), `state`, `env_state` and `action` (each a `u64` count of `f32` bits),
//! `reward` (`f32` bits), `success` and `done` (`u8` each); last, the FNV-1a 64 of everything
//! before it (`u64`). "bytes" is a `u64` length and the bytes.

use std::path::{Path, PathBuf};

use roboaudit_testbed::{EpisodeRecord, Frame};

use crate::dataset::PlannedEpisode;
use crate::error::Result;

/// The folder of finished episodes inside the resume folder.
pub const EPISODES_DIR: &str = "episodes";
const MAGIC: &[u8] = b"RAEPISODE1";

/// The file of planned episode `index` in the episodes folder `dir`.
#[must_use]
pub fn episode_path(dir: &Path, index: usize) -> PathBuf {
    dir.join(format!("{index:06}.episode"))
}

/// Writes `record`, the recording of episode `index`, to its file in `dir` atomically.
///
/// # Errors
/// [`crate::CollectError::Io`] when the file cannot be written.
pub fn write_episode(dir: &Path, index: usize, record: &EpisodeRecord) -> Result<()> {
    crate::served::write_atomic(&episode_path(dir, index), &encode(record))
}

/// The recording of planned episode `p` kept in `dir`: `None` when its file is missing,
/// truncated, damaged (another checksum) or of another episode (another seed), so that the
/// episode is recorded again.
#[must_use]
pub fn read_episode(dir: &Path, p: &PlannedEpisode) -> Option<EpisodeRecord> {
    let bytes = std::fs::read(episode_path(dir, p.index)).ok()?;
    let record = decode(&bytes, p)?;
    (record.seed == p.initial.episode_seed).then_some(record)
}

fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    out.extend_from_slice(&(b.len() as u64).to_le_bytes());
    out.extend_from_slice(b);
}

fn put_f32s(out: &mut Vec<u8>, v: &[f32]) {
    out.extend_from_slice(&(v.len() as u64).to_le_bytes());
    for x in v {
        out.extend_from_slice(&x.to_bits().to_le_bytes());
    }
}

fn encode(r: &EpisodeRecord) -> Vec<u8> {
    let mut out = MAGIC.to_vec();
    out.extend_from_slice(&r.seed.to_le_bytes());
    put_bytes(&mut out, r.scene_id.as_bytes());
    out.extend_from_slice(&(r.frames.len() as u64).to_le_bytes());
    for f in &r.frames {
        put_bytes(&mut out, &f.image_png);
        match &f.wrist_png {
            Some(w) => {
                out.push(1);
                put_bytes(&mut out, w);
            }
            None => out.push(0),
        }
        put_f32s(&mut out, &f.state);
        put_f32s(&mut out, &f.env_state);
        put_f32s(&mut out, &f.action);
        out.extend_from_slice(&f.reward.to_bits().to_le_bytes());
        out.push(u8::from(f.success));
        out.push(u8::from(f.done));
    }
    let sum = roboaudit_types::seed::fnv1a64(&out);
    out.extend_from_slice(&sum.to_le_bytes());
    out
}

/// A cursor over a file's bytes; every read is bounds-checked (`None` past the end).
struct Reader<'a> {
    rest: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if n > self.rest.len() {
            return None;
        }
        let (head, rest) = self.rest.split_at(n);
        self.rest = rest;
        Some(head)
    }

    fn u8(&mut self) -> Option<u8> {
        self.take(1).map(|b| b[0])
    }

    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }

    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }

    fn size(&mut self) -> Option<usize> {
        usize::try_from(self.u64()?).ok()
    }

    fn bytes(&mut self) -> Option<Vec<u8>> {
        let n = self.size()?;
        self.take(n).map(<[u8]>::to_vec)
    }

    fn f32s(&mut self) -> Option<Vec<f32>> {
        let n = self.size()?;
        // A damaged count must not reserve more than the file could hold.
        if n > self.rest.len() / 4 {
            return None;
        }
        (0..n).map(|_| self.u32().map(f32::from_bits)).collect()
    }

    fn flag(&mut self) -> Option<bool> {
        match self.u8()? {
            0 => Some(false),
            1 => Some(true),
            _ => None,
        }
    }
}

fn decode(bytes: &[u8], p: &PlannedEpisode) -> Option<EpisodeRecord> {
    let body_len = bytes.len().checked_sub(8)?;
    let (body, sum) = bytes.split_at(body_len);
    if roboaudit_types::seed::fnv1a64(body).to_le_bytes() != sum {
        return None;
    }
    let mut r = Reader { rest: body };
    if r.take(MAGIC.len())? != MAGIC {
        return None;
    }
    let seed = r.u64()?;
    let scene_id = String::from_utf8(r.bytes()?).ok()?;
    let n = r.size()?;
    let mut frames = Vec::new();
    for _ in 0..n {
        let image_png = r.bytes()?;
        let wrist_png = if r.flag()? { Some(r.bytes()?) } else { None };
        frames.push(Frame {
            image_png,
            wrist_png,
            state: r.f32s()?,
            env_state: r.f32s()?,
            action: r.f32s()?,
            reward: f32::from_bits(r.u32()?),
            success: r.flag()?,
            done: r.flag()?,
        });
    }
    r.rest.is_empty().then_some(EpisodeRecord {
        task: p.task,
        scene_id,
        seed,
        frames,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::CollectConfig;
    use crate::dataset::plan_dataset;

    fn record(seed: u64) -> EpisodeRecord {
        let frame = |k: u8| Frame {
            image_png: vec![k; 5],
            wrist_png: (k == 1).then(|| vec![9, 8]),
            state: vec![0.1, -0.0, f32::MIN_POSITIVE],
            env_state: vec![1.0e-30; 7],
            action: vec![0.3; 7],
            reward: f32::from(k),
            success: k == 1,
            done: k == 1,
        };
        EpisodeRecord {
            task: crate::scenes::push_tasks()[0],
            scene_id: "push-00".into(),
            seed,
            frames: vec![frame(0), frame(1)],
        }
    }

    #[test]
    fn an_episode_reads_back_bit_for_bit_and_a_damaged_one_not_at_all() {
        let dir = tempfile::tempdir().unwrap();
        let plan = plan_dataset(&CollectConfig::small().check().unwrap()).unwrap();
        let p = &plan[0];
        let r = record(p.initial.episode_seed);
        write_episode(dir.path(), 0, &r).unwrap();
        let back = read_episode(dir.path(), p).unwrap();
        assert_eq!(back, r);
        assert_eq!(back.frames[0].state[1].to_bits(), (-0.0f32).to_bits());
        // Another planned episode (another seed) is not this one.
        std::fs::copy(episode_path(dir.path(), 0), episode_path(dir.path(), 1)).unwrap();
        assert_eq!(read_episode(dir.path(), &plan[1]), None);
        // Truncated, or one byte changed: recorded again.
        let path = episode_path(dir.path(), 0);
        let bytes = std::fs::read(&path).unwrap();
        std::fs::write(&path, &bytes[..bytes.len() - 3]).unwrap();
        assert_eq!(read_episode(dir.path(), p), None);
        let mut edited = bytes.clone();
        edited[20] ^= 1;
        std::fs::write(&path, &edited).unwrap();
        assert_eq!(read_episode(dir.path(), p), None);
        std::fs::remove_file(&path).unwrap();
        assert_eq!(read_episode(dir.path(), p), None);
    }
}
