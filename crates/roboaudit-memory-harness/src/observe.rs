//! What the policy sees of a testbed episode ([`Observation`]) and what it does not (the hidden
//! physical state the present check compares within tolerance).

use roboaudit_testbed::geom::yaw_of;
use roboaudit_testbed::{CameraKind, Episode, SceneRenderer};
use serde::{Deserialize, Serialize};

use crate::error::HarnessError;
use crate::policy::{FeatureLayout, Frame, Observation};

/// The feature layout of an episode's scene.
pub fn layout_of(ep: &Episode) -> FeatureLayout {
    let l = &ep.scene().layout;
    FeatureLayout {
        n_blocks: ep.world().n_blocks(),
        n_trays: l.trays.len(),
        n_pads: l.pads.len(),
    }
}

/// The policy-visible observation of `ep`'s present state. Reads neither the task progress nor
/// the remembered origins, so the world label cannot reach it.
///
/// # Errors
/// [`HarnessError::Testbed`] when rendering fails.
pub fn observe(
    ep: &mut Episode,
    renderer: Option<&mut SceneRenderer>,
    branch_candidates: Vec<usize>,
) -> Result<Observation, HarnessError> {
    let layout = layout_of(ep);
    let mut f: Vec<f64> = Vec::with_capacity(layout.len());
    let p = ep.proprio();
    f.extend(p.joint_pos);
    f.extend(p.ee.pos);
    f.extend(p.ee.quat);
    f.push(p.gripper);
    f.push(ep.world().gripper_command());
    for b in 0..layout.n_blocks {
        match ep.world().block_pose(b) {
            Some(pose) => {
                f.extend(pose.pos);
                f.push(yaw_of(pose.quat));
            }
            None => f.extend([0.0; 4]),
        }
    }
    let l = &ep.scene().layout;
    for t in &l.trays {
        f.extend([t.x, t.y]);
    }
    for t in &l.pads {
        f.extend([t.x, t.y]);
    }
    let frame = match renderer {
        Some(r) => {
            let img = r.render(ep, CameraKind::Scene)?;
            Some(Frame {
                width: img.width,
                height: img.height,
                rgb: img.rgb,
            })
        }
        None => None,
    };
    Ok(Observation {
        features: f.into_iter().map(|v| v as f32).collect(),
        layout,
        frame,
        branch_candidates,
    })
}

/// Declared tolerance on the hidden physical state of the two histories' natural presents.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Tolerance {
    /// Largest difference of any block centre or of the tool-centre point (m, per axis).
    pub position_m: f64,
    /// Largest difference of any arm joint angle (rad).
    pub joint_rad: f64,
}

impl Default for Tolerance {
    /// 1 cm and 0.05 rad.
    fn default() -> Self {
        Tolerance {
            position_m: 0.01,
            joint_rad: 0.05,
        }
    }
}

/// Hidden physical state compared between the two natural presents.
#[derive(Debug, Clone, PartialEq)]
pub struct Hidden {
    /// Block centres and the tool-centre point (m).
    pub positions: Vec<[f64; 3]>,
    /// Arm joint angles (rad).
    pub joints: [f64; 7],
}

/// Reads the hidden state of `ep`.
pub fn hidden(ep: &Episode) -> Hidden {
    let w = ep.world();
    let mut positions: Vec<[f64; 3]> = (0..w.n_blocks())
        .filter_map(|b| w.block_pose(b))
        .map(|p| p.pos)
        .collect();
    positions.push(w.tcp_pose().pos);
    Hidden {
        positions,
        joints: w.arm_joints(),
    }
}

/// Largest position difference (m, any body, any axis) and joint difference (rad).
pub fn hidden_delta(a: &Hidden, b: &Hidden) -> [f64; 2] {
    let dp = a
        .positions
        .iter()
        .zip(&b.positions)
        .map(|(p, q)| body_delta(p, q))
        .fold(0.0, f64::max);
    [dp, joint_delta(a, b)]
}

/// Largest difference of one body's position (m, any axis).
fn body_delta(p: &[f64; 3], q: &[f64; 3]) -> f64 {
    (0..3).map(|k| (p[k] - q[k]).abs()).fold(0.0, f64::max)
}

/// Largest arm joint difference (rad).
fn joint_delta(a: &Hidden, b: &Hidden) -> f64 {
    a.joints
        .iter()
        .zip(&b.joints)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
}

/// `None` when `a` and `b` agree within `tol`, else the first difference in words.
pub fn hidden_mismatch(a: &Hidden, b: &Hidden, tol: &Tolerance) -> Option<String> {
    if a.positions.len() != b.positions.len() {
        return Some("different numbers of bodies".into());
    }
    let n = a.positions.len();
    for (i, (p, q)) in a.positions.iter().zip(&b.positions).enumerate() {
        let d = body_delta(p, q);
        if d.is_nan() || d > tol.position_m {
            let what = if i + 1 == n {
                "tool-centre point".to_owned()
            } else {
                format!("block {i}")
            };
            return Some(format!(
                "{what} differs by {d:.4} m (tolerance {} m)",
                tol.position_m
            ));
        }
    }
    let dj = joint_delta(a, b);
    if dj.is_nan() || dj > tol.joint_rad {
        return Some(format!(
            "arm joints differ by {dj:.4} rad (tolerance {} rad)",
            tol.joint_rad
        ));
    }
    None
}
