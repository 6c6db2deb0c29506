//! Scenes (layout + appearance), reproducible scene sets and their `scenes.csv` form.

pub mod appearance;
mod csv_out;
pub mod layout;
pub(crate) mod rng;

pub use appearance::{Appearance, CameraPose, TableTexture};
pub use csv_out::{SCENE_CSV_COLUMNS, scene_row, scenes_csv};
pub use layout::{DoorParams, HingeSide, Layout, Obstacle, Placement, door_yaw_range};

use crate::error::{Result, TestbedError};
use crate::task::Family;
use serde::{Deserialize, Serialize};

/// How a query scene differs from the base (library) scenes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Perturbation {
    /// A base scene (library collection scene): level-0 layout, canonical appearance.
    Base,
    /// Base layout, new appearance draw.
    Appearance,
    /// New layout at level 1–3, canonical appearance.
    Layout,
    /// New layout and new appearance.
    Fresh,
}

impl Perturbation {
    /// CSV name (`base`, `appearance`, `layout`, `fresh`).
    pub fn name(self) -> &'static str {
        match self {
            Perturbation::Base => "base",
            Perturbation::Appearance => "appearance",
            Perturbation::Layout => "layout",
            Perturbation::Fresh => "fresh",
        }
    }
}

/// A scene: physical layout plus appearance.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Scene {
    /// Identifier, unique within a set (e.g. `q07`).
    pub scene_id: String,
    /// Object family the layout was drawn for.
    pub family: Family,
    /// Perturbation type.
    pub perturbation: Perturbation,
    /// Seed the layout was drawn from.
    pub layout_seed: u64,
    /// Physical layout (its `level` is the layout level).
    pub layout: Layout,
    /// Appearance (its `draw` is the appearance draw).
    pub appearance: Appearance,
}

impl Scene {
    /// The default scene of a family: nominal layout, canonical appearance, id `default`.
    pub fn default_for(family: Family) -> Scene {
        Scene {
            scene_id: "default".into(),
            family,
            perturbation: Perturbation::Base,
            layout_seed: 0,
            layout: Layout::nominal(family),
            appearance: Appearance::canonical(),
        }
    }

    /// A scene from explicit draws: layout `level` from `layout_seed`, appearance draw `draw` of the
    /// appearance seed `appearance_seed`.
    ///
    /// # Errors
    /// [`TestbedError::InvalidParameter`] when `level > 3`.
    pub fn from_draws(
        family: Family,
        scene_id: &str,
        perturbation: Perturbation,
        level: u8,
        layout_seed: u64,
        appearance_seed: u64,
        draw: u32,
    ) -> Result<Scene> {
        Ok(Scene {
            scene_id: scene_id.into(),
            family,
            perturbation,
            layout_seed,
            layout: Layout::sample(family, level, layout_seed)?,
            appearance: Appearance::sample(appearance_seed, draw),
        })
    }

    /// The layout level (0–3).
    pub fn layout_level(&self) -> u8 {
        self.layout.level
    }

    /// The appearance draw (0 = canonical).
    pub fn appearance_draw(&self) -> u32 {
        self.appearance.draw
    }
}

/// How many scenes of each kind to generate. The paper's Stack/Door sets use 40 queries over four layout
/// levels and five appearance draws (seed 000, §II).
///
/// Each base (library) scene is a level-0 layout with the canonical appearance. Appearance-perturbed
/// queries are base layouts (cycled) with appearance draws 1..=`n_draws`; layout-perturbed queries
/// are new layouts at levels 1, 2, 3 (cycled) with the canonical appearance; fresh queries are new
/// layouts at levels 0–3 (cycled) with appearance draws 1..=`n_draws`. `n_draws` counts the
/// non-canonical draws (the paper uses 4 besides the canonical one). The field documentation is
/// the command-line help of `testbed scenes`, whose parser bounds each count of scenes; the
/// command line's `family` is replaced by its task's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct SceneSetSpec {
    /// Object family.
    #[cfg_attr(feature = "clap", arg(skip = Family::Stack))]
    pub family: Family,
    /// Master seed.
    #[cfg_attr(feature = "clap", arg(long, default_value_t = 0))]
    pub seed: u64,
    /// Base (library) scenes (at most 100,000).
    #[cfg_attr(
        feature = "clap",
        arg(long, default_value_t = SceneSetSpec::standard(Family::Stack, 0).n_base, value_parser = crate::request::count(crate::request::MAX_SCENES))
    )]
    pub n_base: usize,
    /// Appearance-perturbed queries (at most 100,000).
    #[cfg_attr(
        feature = "clap",
        arg(long, default_value_t = SceneSetSpec::standard(Family::Stack, 0).n_appearance, value_parser = crate::request::count(crate::request::MAX_SCENES))
    )]
    pub n_appearance: usize,
    /// Layout-perturbed queries (at most 100,000).
    #[cfg_attr(
        feature = "clap",
        arg(long, default_value_t = SceneSetSpec::standard(Family::Stack, 0).n_layout, value_parser = crate::request::count(crate::request::MAX_SCENES))
    )]
    pub n_layout: usize,
    /// Fresh queries (at most 100,000).
    #[cfg_attr(
        feature = "clap",
        arg(long, default_value_t = SceneSetSpec::standard(Family::Stack, 0).n_fresh, value_parser = crate::request::count(crate::request::MAX_SCENES))
    )]
    pub n_fresh: usize,
    /// Distinct non-canonical appearance draws.
    #[cfg_attr(
        feature = "clap",
        arg(long, default_value_t = SceneSetSpec::standard(Family::Stack, 0).n_draws)
    )]
    pub n_draws: u32,
}

impl SceneSetSpec {
    /// 10 base scenes and 40 queries (16 appearance, 16 layout, 8 fresh) with 4 appearance draws.
    pub fn standard(family: Family, seed: u64) -> SceneSetSpec {
        SceneSetSpec {
            family,
            seed,
            n_base: 10,
            n_appearance: 16,
            n_layout: 16,
            n_fresh: 8,
            n_draws: 4,
        }
    }
}

/// A generated scene set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SceneSet {
    /// Base (library collection) scenes, ids `b00`, `b01`, ….
    pub base: Vec<Scene>,
    /// Query scenes, ids `q00`, `q01`, …: appearance-perturbed first, then layout-perturbed, then fresh.
    pub queries: Vec<Scene>,
}

impl SceneSet {
    /// Generates the set; same spec gives the same set.
    ///
    /// # Errors
    /// [`TestbedError::InvalidParameter`] when `n_base == 0` while appearance queries are requested, or
    /// `n_draws == 0` while appearance or fresh queries are requested.
    pub fn generate(spec: &SceneSetSpec) -> Result<SceneSet> {
        if spec.n_base == 0 && spec.n_appearance > 0 {
            return Err(TestbedError::InvalidParameter(
                "appearance queries need n_base > 0".into(),
            ));
        }
        if spec.n_draws == 0 && (spec.n_appearance + spec.n_fresh) > 0 {
            return Err(TestbedError::InvalidParameter(
                "appearance and fresh queries need n_draws > 0".into(),
            ));
        }
        let f = spec.family;
        let base_seed = |i: usize| spec.seed.wrapping_mul(1_000_003).wrapping_add(i as u64);
        let base = (0..spec.n_base)
            .map(|i| {
                Scene::from_draws(
                    f,
                    &format!("b{i:02}"),
                    Perturbation::Base,
                    0,
                    base_seed(i),
                    spec.seed,
                    0,
                )
            })
            .collect::<Result<Vec<_>>>()?;
        let mut queries = Vec::new();
        for j in 0..spec.n_appearance {
            let b = &base[j % spec.n_base];
            let draw = 1 + (j as u32 % spec.n_draws);
            queries.push(Scene {
                scene_id: String::new(),
                perturbation: Perturbation::Appearance,
                appearance: Appearance::sample(spec.seed, draw),
                ..b.clone()
            });
        }
        for j in 0..spec.n_layout {
            let level = 1 + (j % 3) as u8;
            let s = base_seed(10_000 + j);
            queries.push(Scene::from_draws(
                f,
                "",
                Perturbation::Layout,
                level,
                s,
                spec.seed,
                0,
            )?);
        }
        for j in 0..spec.n_fresh {
            let level = (j % 4) as u8;
            let draw = 1 + (j as u32 % spec.n_draws);
            let s = base_seed(20_000 + j);
            queries.push(Scene::from_draws(
                f,
                "",
                Perturbation::Fresh,
                level,
                s,
                spec.seed,
                draw,
            )?);
        }
        for (i, q) in queries.iter_mut().enumerate() {
            q.scene_id = format!("q{i:02}");
        }
        Ok(SceneSet { base, queries })
    }

    /// Base scenes followed by queries.
    pub fn all(&self) -> impl Iterator<Item = &Scene> {
        self.base.iter().chain(&self.queries)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn standard_set_has_the_documented_split() {
        let s = SceneSet::generate(&SceneSetSpec::standard(Family::Stack, 5)).unwrap();
        assert_eq!(s.base.len(), 10);
        assert_eq!(s.queries.len(), 40);
        let count = |p| s.queries.iter().filter(|q| q.perturbation == p).count();
        assert_eq!(
            (
                count(Perturbation::Appearance),
                count(Perturbation::Layout),
                count(Perturbation::Fresh)
            ),
            (16, 16, 8)
        );
        // Appearance queries keep their base layout exactly.
        assert_eq!(s.queries[0].layout, s.base[0].layout);
        assert_ne!(s.queries[0].appearance, s.base[0].appearance);
        let levels: Vec<u8> = s.queries.iter().map(|q| q.layout_level()).collect();
        assert!(levels.contains(&3) && levels.contains(&1));
        assert_eq!(
            s,
            SceneSet::generate(&SceneSetSpec::standard(Family::Stack, 5)).unwrap()
        );
    }
}
