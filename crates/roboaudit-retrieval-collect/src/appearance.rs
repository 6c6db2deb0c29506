//! Appearance-caused failures of a finished collection (docs/methods.md §1.8): the executions of
//! each experience in the appearance-perturbed queries built on its own base layout.

use crate::config::CollectConfig;
use crate::error::Result;
use crate::scenes::{QUERY_BASES, query_scenes};
use roboaudit_data::{RetrievalPaths, read_executions, read_experiences};
use roboaudit_testbed::Perturbation;
use roboaudit_types::{AppearanceFailures, ExecutionRecord, ExperienceRecord};
use std::collections::HashMap;
use std::path::Path;

/// [`AppearanceFailures`] of the collection `config` in run folder `dir` (its `experiences.csv`
/// and execution log). Appearance query `i` (the first `config.split().appearance` query scenes)
/// keeps the physical state of base scene `b{i mod 10}` ([`query_scenes`]); an experience
/// recorded in that base scene (`base_scene_id`) meets its own layout there.
///
/// # Errors
/// [`crate::CollectError::Data`] for an unreadable or malformed table (naming file, row and
/// column); testbed errors of scene generation.
pub fn appearance_caused_failures(
    config: &CollectConfig,
    dir: &Path,
) -> Result<AppearanceFailures> {
    let paths = RetrievalPaths::from_run_dir(dir);
    let experiences = read_experiences(&paths.experiences)?;
    let executions = read_executions(&paths.executions)?;
    let queries = query_scenes(config)?;
    let own_layout: Vec<(String, String)> = queries
        .iter()
        .enumerate()
        .filter(|(_, q)| q.perturbation == Perturbation::Appearance)
        .map(|(i, q)| (q.scene_id.clone(), format!("b{:02}", i % QUERY_BASES)))
        .collect();
    Ok(count(&experiences, &executions, &own_layout))
}

/// The counting of [`appearance_caused_failures`]: `own_layout` pairs each appearance query's
/// id with its base scene's id.
fn count(
    experiences: &[ExperienceRecord],
    executions: &[ExecutionRecord],
    own_layout: &[(String, String)],
) -> AppearanceFailures {
    let base_of: HashMap<&str, &str> = own_layout
        .iter()
        .map(|(q, b)| (q.as_str(), b.as_str()))
        .collect();
    // Experiences whose base layout has an appearance query, with their base scene.
    let home: HashMap<&str, &str> = experiences
        .iter()
        .filter_map(|e| Some((e.experience_id.as_str(), e.base_scene_id.as_deref()?)))
        .filter(|(_, b)| own_layout.iter().any(|(_, ob)| ob == b))
        .collect();
    let mut out = AppearanceFailures {
        executions: 0,
        failed: 0,
        experiences: home.len(),
        own_base: (0, 0),
    };
    for x in executions {
        let Some(&home_scene) = home.get(x.experience_id.as_str()) else {
            continue;
        };
        if base_of.get(x.scene_id.as_str()) == Some(&home_scene) {
            out.executions += 1;
            out.failed += usize::from(!x.success);
        } else if x.scene_id == home_scene {
            out.own_base.0 += 1;
            out.own_base.1 += usize::from(!x.success);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exp(id: &str, base: &str) -> ExperienceRecord {
        ExperienceRecord {
            experience_id: id.into(),
            base_scene_id: Some(base.into()),
            recorded_at: None,
            own_base_success: None,
        }
    }

    fn run(e: &str, s: &str, seed: i64, success: bool) -> ExecutionRecord {
        ExecutionRecord {
            experience_id: e.into(),
            scene_id: s.into(),
            seed,
            success,
        }
    }

    #[test]
    fn counts_only_executions_on_the_experiences_own_layout() {
        let experiences = [exp("e00", "b01"), exp("e01", "b07"), exp("e02", "b02")];
        // q00 is on b00 (no experience's), q01 on b01 (e00's), q02 on b02 (e02's).
        let own = [
            ("q00".to_owned(), "b00".to_owned()),
            ("q01".to_owned(), "b01".to_owned()),
            ("q02".to_owned(), "b02".to_owned()),
        ];
        let executions = [
            run("e00", "q00", 0, false), // another layout: not counted
            run("e00", "q01", 0, false),
            run("e00", "q01", 1, true),
            run("e02", "q02", 0, false),
            run("e02", "q01", 0, false), // e00's layout, not e02's
            run("e01", "q01", 0, false), // e01 has no appearance query
            run("e00", "q05", 0, false), // a layout query
            run("e00", "b01", 0, true),
            run("e00", "b01", 1, true),
            run("e02", "b02", 0, false),
            run("e01", "b07", 0, false), // no appearance query: not in own_base
        ];
        let got = count(&experiences, &executions, &own);
        assert_eq!(
            got,
            AppearanceFailures {
                executions: 3,
                failed: 2,
                experiences: 2,
                own_base: (3, 1),
            }
        );
        assert_eq!(got.rate(), Some(2.0 / 3.0));
        assert_eq!(got.own_base_rate(), Some(1.0 / 3.0));
    }

    #[test]
    fn the_line_gives_both_counts_and_the_rate() {
        let f = AppearanceFailures {
            executions: 3,
            failed: 2,
            experiences: 2,
            own_base: (3, 1),
        };
        assert_eq!(
            f.to_string(),
            "appearance-caused failures: 2 of 3 executions (66.7 %) in appearance-perturbed \
             queries on the experience's own base layout (2 experience(s)); own base scenes: 1 \
             of 3 failed"
        );
    }

    #[test]
    fn undefined_without_an_own_layout_query() {
        let got = count(
            &[exp("e00", "b11")],
            &[run("e00", "q00", 0, false)],
            &[("q00".to_owned(), "b00".to_owned())],
        );
        assert_eq!((got.executions, got.experiences, got.rate()), (0, 0, None));
    }
}
