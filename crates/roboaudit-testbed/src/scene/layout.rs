//! Physical layouts: object placements, door articulation and obstacles, by layout level 0–3.

use super::rng::{stream, uniform};
use crate::error::{Result, TestbedError};
use crate::task::Family;
use serde::{Deserialize, Serialize};

/// Planar placement of an object on the table (metres, radians; table top is z = 0).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Placement {
    /// x (away from the robot).
    pub x: f64,
    /// y (robot's left).
    pub y: f64,
    /// Rotation about z.
    pub yaw: f64,
}

/// Which edge of the door carries the hinge, seen from the robot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum HingeSide {
    /// Hinge at +y.
    Left,
    /// Hinge at −y.
    Right,
}

/// Door articulation. The door opens away from the robot (+x) against a torsional spring; a latch holds it
/// closed until the lever is pressed down by more than [`crate::world::LATCH_RELEASE_ANGLE`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct DoorParams {
    /// Centre of the closed door panel, x (m).
    pub x: f64,
    /// Centre of the closed door panel, y (m).
    pub y: f64,
    /// Hinge side.
    pub hinge: HingeSide,
    /// Hinge spring stiffness (N·m/rad), in `[0.05, 0.4]`.
    pub stiffness: f64,
    /// Rotation of the whole door (frame and panel) about the vertical through the hinge (rad):
    /// between half and all of [`door_yaw_range`] of the level in magnitude, turning the free edge
    /// away from the robot (sign +1 for a left hinge, −1 for a right one); 0 faces the robot squarely. A translation-only
    /// retarget of a recorded push misses the panel's new orientation, by how much depending on
    /// where along the panel the push lands (seed 000 §II: articulation varies with layout).
    #[serde(default)]
    pub yaw: f64,
}

/// Largest door yaw magnitude (rad) at a layout level: 0.03, 0.5, 0.7, 0.8 for levels 0–3 (a door
/// of level `l` turns by between half and all of it).
pub fn door_yaw_range(level: u8) -> f64 {
    match level {
        0 => 0.03,
        1 => 0.5,
        2 => 0.7,
        _ => 0.8,
    }
}

/// A static box obstacle standing on the table.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Obstacle {
    /// Centre x (m).
    pub x: f64,
    /// Centre y (m).
    pub y: f64,
    /// Half sizes (m); the box stands on the table, so its centre is at z = `half[2]`.
    pub half: [f64; 3],
}

/// The physical part of a scene. Changing any field changes physics.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Layout {
    /// Layout level 0–3 it was drawn at.
    pub level: u8,
    /// Block placements, block `i` coloured [`Family::block_color`]`(i)`.
    pub blocks: Vec<Placement>,
    /// Tray placements (yaw 0).
    pub trays: Vec<Placement>,
    /// Pad placements (yaw 0).
    pub pads: Vec<Placement>,
    /// Door, for the door family.
    pub door: Option<DoorParams>,
    /// Obstacles: none at levels 0–1, one at level 2, two at level 3.
    pub obstacles: Vec<Obstacle>,
}

/// Displacement radius (m), yaw range (rad) and obstacle count per level.
fn level_params(level: u8) -> (f64, f64, usize) {
    match level {
        0 => (0.01, 0.1, 0),
        1 => (0.035, 0.4, 0),
        2 => (0.06, 0.8, 1),
        _ => (0.08, std::f64::consts::FRAC_PI_4, 2),
    }
}

/// Nominal (block, tray, pad) centres of a family.
type Nominal = (Vec<[f64; 2]>, Vec<[f64; 2]>, Vec<[f64; 2]>);

fn nominal(family: Family) -> Nominal {
    match family {
        Family::Stack => (vec![[0.45, -0.12], [0.50, 0.10]], vec![], vec![]),
        Family::Door => (vec![], vec![], vec![]),
        Family::PutBack => (
            vec![],
            vec![[0.58, -0.2], [0.58, 0.0], [0.58, 0.2]],
            vec![[0.38, 0.0]],
        ),
        Family::Swap => (vec![], vec![[0.56, -0.18], [0.56, 0.18]], vec![[0.38, 0.0]]),
        Family::Rearrange => (
            vec![],
            vec![[0.58, -0.2], [0.58, 0.0], [0.58, 0.2]],
            vec![[0.37, -0.12], [0.37, 0.12]],
        ),
        Family::Language => (
            vec![[0.40, -0.2], [0.40, -0.067], [0.40, 0.067], [0.40, 0.2]],
            vec![[0.61, -0.19], [0.61, 0.0], [0.61, 0.19]],
            vec![],
        ),
    }
}

impl Layout {
    /// The undisplaced layout of a family (level 0 without jitter, left hinge, stiffness 0.1).
    pub fn nominal(family: Family) -> Layout {
        let (b, t, p) = nominal(family);
        let pl = |v: &[f64; 2]| Placement {
            x: v[0],
            y: v[1],
            yaw: 0.0,
        };
        Layout {
            level: 0,
            blocks: b.iter().map(pl).collect(),
            trays: t.iter().map(pl).collect(),
            pads: p.iter().map(pl).collect(),
            door: (family == Family::Door).then_some(DoorParams {
                x: 0.62,
                y: 0.0,
                hinge: HingeSide::Left,
                stiffness: 0.1,
                yaw: 0.0,
            }),
            obstacles: vec![],
        }
    }

    /// Draws a layout of `family` at `level` (0–3) from `seed`. Level 0 jitters objects by ≤ 1 cm and
    /// 0.1 rad; level 1 by ≤ 3.5 cm / 0.4 rad and varies door stiffness; level 2 by ≤ 6 cm / 0.8 rad, flips
    /// the hinge side at random and adds one obstacle; level 3 by ≤ 8 cm / π/4 and adds two obstacles.
    /// Doors also turn by a yaw that grows with the level ([`door_yaw_range`]).
    /// Blocks of memory tasks sit in trays and are placed by the episode, so they are not listed here.
    ///
    /// # Errors
    /// [`TestbedError::InvalidParameter`] when `level > 3`.
    pub fn sample(family: Family, level: u8, seed: u64) -> Result<Layout> {
        if level > 3 {
            return Err(TestbedError::InvalidParameter(format!(
                "layout level {level} is not in 0..=3"
            )));
        }
        let (r, yaw_r, n_obst) = level_params(level);
        let mut rng = stream(seed, "layout", u64::from(level));
        let (b, t, p) = nominal(family);
        let jitter =
            |rng: &mut rand_chacha::ChaCha8Rng, v: &[f64; 2], r: f64, yaw_r: f64| Placement {
                x: v[0] + uniform(rng, -r, r),
                y: v[1] + uniform(rng, -r, r),
                yaw: uniform(rng, -yaw_r, yaw_r),
            };
        // Rejection keeps blocks apart (≥ 7 cm) so that a gripper fits between them.
        let mut blocks = Vec::new();
        for _attempt in 0..200 {
            blocks = b
                .iter()
                .map(|v| jitter(&mut rng, v, r, yaw_r))
                .collect::<Vec<_>>();
            if pairwise_ok(&blocks, 0.08) {
                break;
            }
        }
        let trays = t
            .iter()
            .map(|v| Placement {
                yaw: 0.0,
                ..jitter(&mut rng, v, r * 0.4, 0.0)
            })
            .collect::<Vec<_>>();
        let pads = p
            .iter()
            .map(|v| Placement {
                yaw: 0.0,
                ..jitter(&mut rng, v, r * 0.5, 0.0)
            })
            .collect::<Vec<_>>();
        let door = (family == Family::Door).then(|| {
            let stiffness = match level {
                0 => 0.1,
                1 => uniform(&mut rng, 0.05, 0.2),
                2 => uniform(&mut rng, 0.05, 0.3),
                _ => uniform(&mut rng, 0.05, 0.4),
            };
            let hinge = if level >= 2 && rng_bool(&mut rng) {
                HingeSide::Right
            } else {
                HingeSide::Left
            };
            let x = 0.62 + uniform(&mut rng, -r, r) * 0.5;
            let y = uniform(&mut rng, -r, r) * 1.5;
            // The door turns its free edge away from the robot (positive about the hinge axis),
            // which a push along the base scene's panel normal opens less far.
            let turn = match hinge {
                HingeSide::Left => 1.0,
                HingeSide::Right => -1.0,
            };
            DoorParams {
                x,
                y,
                hinge,
                stiffness,
                yaw: turn * uniform(&mut rng, 0.5, 1.0) * door_yaw_range(level),
            }
        });
        let mut occupied: Vec<[f64; 2]> = blocks
            .iter()
            .chain(&trays)
            .chain(&pads)
            .map(|p| [p.x, p.y])
            .collect();
        let mut obstacles = Vec::new();
        for _ in 0..n_obst {
            for _attempt in 0..200 {
                let o = Obstacle {
                    x: uniform(&mut rng, 0.3, 0.72),
                    y: uniform(&mut rng, -0.33, 0.33),
                    half: [
                        uniform(&mut rng, 0.015, 0.03),
                        uniform(&mut rng, 0.015, 0.03),
                        uniform(&mut rng, 0.02, 0.05),
                    ],
                };
                let clear = occupied
                    .iter()
                    .all(|c| (c[0] - o.x).hypot(c[1] - o.y) > 0.13);
                // Keep the door's swing and approach free.
                let door_clear =
                    door.is_none_or(|d| (o.x - d.x).abs() > 0.3 || (o.y - d.y).abs() > 0.3);
                if clear && door_clear {
                    occupied.push([o.x, o.y]);
                    obstacles.push(o);
                    break;
                }
            }
        }
        Ok(Layout {
            level,
            blocks,
            trays,
            pads,
            door,
            obstacles,
        })
    }
}

fn rng_bool(rng: &mut rand_chacha::ChaCha8Rng) -> bool {
    uniform(rng, 0.0, 1.0) < 0.5
}

fn pairwise_ok(p: &[Placement], min: f64) -> bool {
    p.iter().enumerate().all(|(i, a)| {
        p[i + 1..]
            .iter()
            .all(|b| (a.x - b.x).hypot(a.y - b.y) >= min)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sampling_is_reproducible_and_level_dependent() {
        let a = Layout::sample(Family::Language, 2, 7).unwrap();
        let b = Layout::sample(Family::Language, 2, 7).unwrap();
        assert_eq!(a, b);
        assert_eq!(a.obstacles.len(), 1);
        assert_eq!(
            Layout::sample(Family::Stack, 3, 1).unwrap().obstacles.len(),
            2
        );
        assert!(Layout::sample(Family::Stack, 4, 1).is_err());
        let l0 = Layout::sample(Family::Stack, 0, 3).unwrap();
        let n = Layout::nominal(Family::Stack);
        for (p, q) in l0.blocks.iter().zip(&n.blocks) {
            assert!((p.x - q.x).abs() <= 0.01 && (p.y - q.y).abs() <= 0.01);
        }
    }

    #[test]
    fn blocks_keep_apart_at_every_level() {
        for level in 0..=3 {
            for seed in 0..20 {
                let l = Layout::sample(Family::Language, level, seed).unwrap();
                assert!(pairwise_ok(&l.blocks, 0.08), "level {level} seed {seed}");
            }
        }
    }
}
