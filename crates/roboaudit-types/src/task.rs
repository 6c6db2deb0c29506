//! Task identities, names and language instructions of the testbed (seeds 000 §II, 002 §IV-A).
//!
//! Pure data: the testbed (`roboaudit-testbed`) builds scenes and success predicates for them,
//! and the audits' result files name them without depending on the simulator.

use serde::{Deserialize, Serialize};

/// An unknown task name (the string as given); the message lists the valid names.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown task `{0}`; valid tasks: {valid}", valid = TaskKind::all_names().join(", "))]
pub struct UnknownTask(pub String);

/// Colour names of blocks and trays (the language suite refers to objects by these).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Color {
    /// Red.
    Red,
    /// Green.
    Green,
    /// Blue.
    Blue,
    /// Yellow.
    Yellow,
}

impl Color {
    /// All colours, in block order: block `i` of a language scene has colour `ALL[i]`.
    pub const ALL: [Color; 4] = [Color::Red, Color::Green, Color::Blue, Color::Yellow];

    /// Lower-case name (`"red"`, …).
    pub fn name(self) -> &'static str {
        match self {
            Color::Red => "red",
            Color::Green => "green",
            Color::Blue => "blue",
            Color::Yellow => "yellow",
        }
    }

    /// Nominal RGB in `[0, 1]` before the appearance draw shades it.
    pub fn rgb(self) -> [f64; 3] {
        match self {
            Color::Red => [0.85, 0.15, 0.12],
            Color::Green => [0.15, 0.7, 0.2],
            Color::Blue => [0.15, 0.3, 0.85],
            Color::Yellow => [0.9, 0.8, 0.15],
        }
    }

    /// Index in [`Color::ALL`].
    pub fn index(self) -> usize {
        match self {
            Color::Red => 0,
            Color::Green => 1,
            Color::Blue => 2,
            Color::Yellow => 3,
        }
    }

    fn parse(s: &str) -> Option<Color> {
        Color::ALL.into_iter().find(|c| c.name() == s)
    }
}

/// Push direction in the robot frame: the robot stands at the origin looking along +x; left is +y.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum PushDir {
    /// +y.
    Left,
    /// −y.
    Right,
    /// +x (away from the robot).
    Forward,
    /// −x (towards the robot).
    Backward,
}

impl PushDir {
    /// Unit vector in the table plane.
    pub fn unit(self) -> [f64; 2] {
        match self {
            PushDir::Left => [0.0, 1.0],
            PushDir::Right => [0.0, -1.0],
            PushDir::Forward => [1.0, 0.0],
            PushDir::Backward => [-1.0, 0.0],
        }
    }

    /// Lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            PushDir::Left => "left",
            PushDir::Right => "right",
            PushDir::Forward => "forward",
            PushDir::Backward => "backward",
        }
    }

    fn parse(s: &str) -> Option<PushDir> {
        [
            PushDir::Left,
            PushDir::Right,
            PushDir::Forward,
            PushDir::Backward,
        ]
        .into_iter()
        .find(|d| d.name() == s)
    }
}

/// A task of the testbed. Success predicates are documented in `roboaudit_testbed::predicates`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum TaskKind {
    /// Put the red block on the blue block.
    Stack,
    /// Press the latch lever, then push the spring-loaded door open.
    Door,
    /// Memory task: move the block from its origin tray (one of three) to the inspection pad, then return it.
    PutBack,
    /// Memory task: exchange the red and blue blocks between trays A and B through a buffer pad.
    Swap,
    /// Memory task: move two blocks from their trays to two pads, then restore the original arrangement.
    Rearrange,
    /// Language suite: put the block of one colour in the tray of another.
    PickPlace {
        /// Block colour.
        block: Color,
        /// Tray colour (red, green or blue).
        tray: Color,
    },
    /// Language suite: push a block 10 cm in a direction.
    Push {
        /// Block colour.
        block: Color,
        /// Direction.
        dir: PushDir,
    },
}

impl TaskKind {
    /// The twelve tasks of the language-conditioned suite (8 pick-place, 4 push).
    pub fn language_suite() -> Vec<TaskKind> {
        use Color::*;
        let pp = [
            (Red, Blue),
            (Red, Green),
            (Green, Red),
            (Green, Blue),
            (Blue, Red),
            (Blue, Green),
            (Yellow, Red),
            (Yellow, Blue),
        ];
        let mut v: Vec<TaskKind> = pp
            .into_iter()
            .map(|(block, tray)| TaskKind::PickPlace { block, tray })
            .collect();
        v.push(TaskKind::Push {
            block: Red,
            dir: PushDir::Right,
        });
        v.push(TaskKind::Push {
            block: Yellow,
            dir: PushDir::Left,
        });
        v.push(TaskKind::Push {
            block: Green,
            dir: PushDir::Forward,
        });
        v.push(TaskKind::Push {
            block: Blue,
            dir: PushDir::Backward,
        });
        v
    }

    /// Every task: stack, door, the three memory tasks and the language suite.
    pub fn all() -> Vec<TaskKind> {
        let mut v = vec![
            TaskKind::Stack,
            TaskKind::Door,
            TaskKind::PutBack,
            TaskKind::Swap,
            TaskKind::Rearrange,
        ];
        v.extend(TaskKind::language_suite());
        v
    }

    /// Names accepted by [`TaskKind::parse`].
    pub fn all_names() -> Vec<String> {
        TaskKind::all().into_iter().map(|t| t.name()).collect()
    }

    /// Stable name: `stack`, `door`, `put_back`, `swap`, `rearrange`, `pick_place:<block>:<tray>`,
    /// `push:<block>:<dir>`.
    pub fn name(self) -> String {
        match self {
            TaskKind::Stack => "stack".into(),
            TaskKind::Door => "door".into(),
            TaskKind::PutBack => "put_back".into(),
            TaskKind::Swap => "swap".into(),
            TaskKind::Rearrange => "rearrange".into(),
            TaskKind::PickPlace { block, tray } => {
                format!("pick_place:{}:{}", block.name(), tray.name())
            }
            TaskKind::Push { block, dir } => format!("push:{}:{}", block.name(), dir.name()),
        }
    }

    /// Parses a name produced by [`TaskKind::name`] (also accepts `-` for `_`).
    ///
    /// # Errors
    /// [`UnknownTask`] for any other string, and for pick-place into the yellow tray (the
    /// language scene has red, green and blue trays only).
    pub fn parse(s: &str) -> Result<TaskKind, UnknownTask> {
        let norm = s.trim().to_ascii_lowercase().replace('-', "_");
        let unknown = || UnknownTask(s.to_string());
        let parts: Vec<&str> = norm.split(':').collect();
        match parts.as_slice() {
            ["stack"] => Ok(TaskKind::Stack),
            ["door"] => Ok(TaskKind::Door),
            ["put_back"] => Ok(TaskKind::PutBack),
            ["swap"] => Ok(TaskKind::Swap),
            ["rearrange"] => Ok(TaskKind::Rearrange),
            ["pick_place", b, t] => {
                let block = Color::parse(b).ok_or_else(unknown)?;
                let tray = Color::parse(t).ok_or_else(unknown)?;
                if tray == Color::Yellow {
                    return Err(unknown());
                }
                Ok(TaskKind::PickPlace { block, tray })
            }
            ["push", b, d] => Ok(TaskKind::Push {
                block: Color::parse(b).ok_or_else(unknown)?,
                dir: PushDir::parse(d).ok_or_else(unknown)?,
            }),
            _ => Err(unknown()),
        }
    }

    /// The natural-language instruction (LeRobot `task` string).
    pub fn instruction(self) -> String {
        match self {
            TaskKind::Stack => "stack the red block on the blue block".into(),
            TaskKind::Door => "unlatch the door and push it open".into(),
            TaskKind::PutBack => {
                "take the block to the inspection pad, then put it back where it was".into()
            }
            TaskKind::Swap => "swap the red and blue blocks using the buffer pad".into(),
            TaskKind::Rearrange => {
                "move both blocks to the pads, then restore the original arrangement".into()
            }
            TaskKind::PickPlace { block, tray } => {
                format!("put the {} block in the {} tray", block.name(), tray.name())
            }
            TaskKind::Push { block, dir } => {
                format!("push the {} block {}", block.name(), dir.name())
            }
        }
    }

    /// Which scene family (object set) the task uses.
    pub fn family(self) -> Family {
        match self {
            TaskKind::Stack => Family::Stack,
            TaskKind::Door => Family::Door,
            TaskKind::PutBack => Family::PutBack,
            TaskKind::Swap => Family::Swap,
            TaskKind::Rearrange => Family::Rearrange,
            TaskKind::PickPlace { .. } | TaskKind::Push { .. } => Family::Language,
        }
    }

    /// Episode step limit (one step = one action = `roboaudit_testbed::world::SUBSTEPS` physics
    /// steps).
    pub fn max_steps(self) -> usize {
        match self {
            TaskKind::Stack | TaskKind::Door | TaskKind::PickPlace { .. } => 220,
            TaskKind::Push { .. } => 160,
            TaskKind::PutBack => 400,
            TaskKind::Swap => 560,
            TaskKind::Rearrange => 760,
        }
    }
}

/// Object sets: tasks of one family share the scene layout parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Family {
    /// Two blocks (red, blue).
    Stack,
    /// Door with latch lever.
    Door,
    /// One block, three trays, one pad.
    PutBack,
    /// Two blocks, two trays, one buffer pad.
    Swap,
    /// Two blocks, three trays, two pads.
    Rearrange,
    /// Four blocks, three trays (red, green, blue).
    Language,
}

impl Family {
    /// Number of blocks.
    pub fn n_blocks(self) -> usize {
        match self {
            Family::Stack | Family::Swap | Family::Rearrange => 2,
            Family::Door => 0,
            Family::PutBack => 1,
            Family::Language => 4,
        }
    }

    /// Number of trays.
    pub fn n_trays(self) -> usize {
        match self {
            Family::Stack | Family::Door => 0,
            Family::PutBack | Family::Rearrange | Family::Language => 3,
            Family::Swap => 2,
        }
    }

    /// Number of flat pads (inspection spots, buffer).
    pub fn n_pads(self) -> usize {
        match self {
            Family::PutBack | Family::Swap => 1,
            Family::Rearrange => 2,
            _ => 0,
        }
    }

    /// Colour of block `i`.
    pub fn block_color(self, i: usize) -> Color {
        match self {
            Family::Stack | Family::Swap | Family::Rearrange => [Color::Red, Color::Blue][i % 2],
            _ => Color::ALL[i % 4],
        }
    }

    /// Colour of tray `i` (trays of memory tasks are all grey-ish: returned as `None`).
    pub fn tray_color(self, i: usize) -> Option<Color> {
        match self {
            Family::Language => Some([Color::Red, Color::Green, Color::Blue][i % 3]),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_parses_back() {
        for t in TaskKind::all() {
            assert_eq!(TaskKind::parse(&t.name()).unwrap(), t);
        }
        assert_eq!(TaskKind::parse("PUT-BACK").unwrap(), TaskKind::PutBack);
        assert!(TaskKind::parse("pick_place:red:yellow").is_err());
        assert!(TaskKind::parse("fly").is_err());
    }

    #[test]
    fn language_suite_has_at_least_ten_distinct_instructions() {
        let s = TaskKind::language_suite();
        let mut ins: Vec<String> = s.iter().map(|t| t.instruction()).collect();
        ins.sort();
        ins.dedup();
        assert_eq!(ins.len(), 12);
        assert!(ins.contains(&"put the red block in the blue tray".to_string()));
    }
}
