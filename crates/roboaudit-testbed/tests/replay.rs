//! Experiences: recording, own-base replay, cross-scene execution.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use roboaudit_testbed::*;

#[test]
fn own_base_replay_succeeds_and_transfer_varies() {
    for task in [
        TaskKind::Stack,
        TaskKind::Door,
        TaskKind::language_suite()[0],
    ] {
        let set = SceneSet::generate(&SceneSetSpec {
            n_base: 3,
            n_appearance: 3,
            n_layout: 6,
            n_fresh: 0,
            ..SceneSetSpec::standard(task.family(), 1)
        })
        .unwrap();
        let compiled: Vec<CompiledScene> = set
            .all()
            .map(|s| CompiledScene::new(s, 64).unwrap())
            .collect();
        let cfg = |seed| EpisodeConfig {
            seed,
            ..Default::default()
        };
        let mut own = 0;
        let mut matrix = Vec::new();
        for (b, base) in compiled.iter().take(3).enumerate() {
            let exp =
                Experience::record(base, task, &cfg(b as u64), ExpertParams::default()).unwrap();
            assert!(exp.recorded_success, "{}", task.name());
            own += u32::from(execute(&exp, base, &cfg(100), Retarget::FirstAnchor).unwrap());
            // Appearance-perturbed queries share the base layout, so replay outcomes do not change.
            let row: Vec<bool> = compiled
                .iter()
                .map(|q| execute(&exp, q, &cfg(100), Retarget::FirstAnchor).unwrap())
                .collect();
            assert_eq!(
                row[b],
                row[3 + b],
                "{} appearance changed a replay outcome",
                task.name()
            );
            matrix.push(row);
        }
        assert!(own >= 2, "{}: own-base replay {own}/3", task.name());
        if task == TaskKind::Stack {
            // Moving the whole path with the red block misses the blue block once the two are displaced
            // differently: layout-perturbed queries (columns 6..12) must contain failures.
            assert!(
                matrix.iter().any(|row| row[6..].iter().any(|ok| !ok)),
                "{matrix:?}"
            );
        }
        // Determinism of the whole row.
        let exp = Experience::record(&compiled[0], task, &cfg(0), ExpertParams::default()).unwrap();
        let again: Vec<bool> = compiled
            .iter()
            .map(|q| execute(&exp, q, &cfg(100), Retarget::FirstAnchor).unwrap())
            .collect();
        assert_eq!(again, matrix[0]);
    }
}
