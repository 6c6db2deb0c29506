//! A door demonstrator with a per-experience style: where along the panel it pushes, how deep and
//! how high. The testbed's scripted expert always pushes the same point equally deep, so its
//! demonstrations are interchangeable. People demonstrate with individual habits; with these, the
//! Replay of an experience transfers differently to a door hinged on the other side (a push recorded
//! near the hinge lands far from the new hinge) and to a door turned away from the robot (the push
//! travels along the base scene's panel normal, which opens a yawed door less, and less still the
//! further from the hinge it lands): the layout sensitivity of open-loop Replay the paper reports
//! (seed 000 §II). The testbed's door is damped, so it opens only as far as the push carries it.

use roboaudit_testbed::geom::Vec3;
use roboaudit_testbed::scene::HingeSide;
use roboaudit_testbed::{Action, Anchor, Episode};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// How one demonstrator opens the door.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct DoorStyle {
    /// Push point along the panel relative to the testbed's push site, towards the free edge (m);
    /// negative moves towards the hinge. Drawn in `[-0.09, 0.07]`.
    pub lateral: f64,
    /// How far past the closed panel the push goes (m), in `[0.01, 0.12]`: shallow pushes open a stiff
    /// door too little.
    pub depth: f64,
    /// Height of the push above the table (m), in `[0.03, 0.12]`.
    pub height: f64,
}

#[derive(Debug, Clone, Copy)]
struct Goal {
    target: Vec3,
    tol: f64,
    max: usize,
    hold: bool,
    anchor: Anchor,
}

/// The demonstrator: press the lever, then push the panel in the style's way, then go home.
#[derive(Debug, Clone)]
pub struct DoorDemo {
    style: DoorStyle,
    plan: Option<VecDeque<Goal>>,
    steps: usize,
}

const HOME: Vec3 = [0.45, 0.0, 0.2];
const CLOSED: f64 = 1.0;

impl DoorDemo {
    /// A demonstrator with `style`; the plan is made from the first state it sees.
    pub fn new(style: DoorStyle) -> DoorDemo {
        DoorDemo {
            style,
            plan: None,
            steps: 0,
        }
    }

    fn make_plan(&self, ep: &Episode) -> VecDeque<Goal> {
        let w = ep.world();
        let (Some(t), Some(p)) = (w.lever_tip(), w.door_push_point()) else {
            return VecDeque::new();
        };
        // +1 when "towards the free edge" is −y (hinge on the left, +y).
        let s = match ep.scene().layout.door.map(|d| d.hinge) {
            Some(HingeSide::Right) => -1.0,
            _ => 1.0,
        };
        let y = p[1] - s * self.style.lateral;
        let g = |target: Vec3, tol: f64, max: usize, anchor: Anchor| Goal {
            target,
            tol,
            max,
            hold: false,
            anchor,
        };
        let lever = Anchor::LeverTip;
        let push = Anchor::DoorPush;
        VecDeque::from([
            g([t[0], t[1], t[2] + 0.08], 0.01, 80, lever),
            g([t[0], t[1], t[2] - 0.035], 0.008, 25, lever),
            Goal {
                hold: true,
                ..g([t[0], t[1], t[2] - 0.035], 0.0, 4, lever)
            },
            g([t[0], t[1], t[2] + 0.09], 0.02, 80, lever),
            g([p[0] - 0.08, y, 0.25], 0.015, 80, push),
            g([p[0] - 0.08, y, self.style.height], 0.01, 80, push),
            g(
                [p[0] + self.style.depth, y, self.style.height],
                0.01,
                60,
                push,
            ),
            g(HOME, 0.03, 80, Anchor::World),
        ])
    }

    /// The next action and the anchor it is relative to (for [`roboaudit_testbed::Experience::record_with`]).
    pub fn act(&mut self, ep: &Episode) -> (Action, Anchor) {
        if self.plan.is_none() {
            self.plan = Some(self.make_plan(ep));
        }
        let Some(plan) = self.plan.as_mut() else {
            return (Action::default(), Anchor::World);
        };
        let c = ep.world().commanded_tcp();
        while let Some(goal) = plan.front().copied() {
            let d = [0, 1, 2].map(|k| goal.target[k] - c[k]);
            let reached = !goal.hold && d.iter().map(|v| v * v).sum::<f64>().sqrt() <= goal.tol;
            if reached || self.steps >= goal.max {
                plan.pop_front();
                self.steps = 0;
                continue;
            }
            self.steps += 1;
            let dpos = if goal.hold { [0.0; 3] } else { d };
            return (
                Action {
                    dpos,
                    drot: [0.0; 3],
                    gripper: CLOSED,
                },
                goal.anchor,
            );
        }
        (
            Action {
                gripper: CLOSED,
                ..Action::default()
            },
            Anchor::World,
        )
    }
}
