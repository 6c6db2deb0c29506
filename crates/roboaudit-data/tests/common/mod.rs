//! Shared builders for the integration tests.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::Path;

use roboaudit_data::{
    DataError, RetrievalPaths, write_embeddings, write_executions, write_experiences, write_scenes,
    write_selections,
};
use roboaudit_types::{
    EmbeddingKind, EmbeddingRecord, ExecutionRecord, ExperienceRecord, Perturbation, RecordedAt,
    RetrievalInputs, SceneRecord, SelectionRecord,
};

/// Three experiences × three query scenes × two seeds, plus own-base executions of e0 and e1
/// in their base scenes b0, b1 (which are not query scenes); two representations.
pub fn sample() -> RetrievalInputs {
    let experiences = vec![
        ExperienceRecord {
            experience_id: "e0".into(),
            base_scene_id: Some("b0".into()),
            recorded_at: Some(RecordedAt::Order(1)),
            own_base_success: Some(0.5),
        },
        ExperienceRecord {
            experience_id: "e1".into(),
            base_scene_id: Some("b1".into()),
            recorded_at: Some(RecordedAt::Order(2)),
            own_base_success: None,
        },
        ExperienceRecord {
            experience_id: "e2".into(),
            base_scene_id: None,
            recorded_at: None,
            own_base_success: Some(1.0),
        },
    ];
    let scenes = vec![
        SceneRecord {
            scene_id: "s0".into(),
            perturbation: Perturbation::Appearance,
            layout_level: 0,
            appearance_draw: 4,
            extra: BTreeMap::from([("light".to_owned(), "0.3".to_owned())]),
        },
        SceneRecord {
            scene_id: "s1".into(),
            perturbation: Perturbation::Layout,
            layout_level: 2,
            appearance_draw: 0,
            extra: BTreeMap::new(),
        },
        SceneRecord {
            scene_id: "s2".into(),
            perturbation: Perturbation::Fresh,
            layout_level: 1,
            appearance_draw: 7,
            extra: BTreeMap::new(),
        },
    ];
    let mut executions = Vec::new();
    for (e, exp) in experiences.iter().enumerate() {
        for (s, scene) in scenes.iter().enumerate() {
            for seed in 0..2 {
                executions.push(ExecutionRecord {
                    experience_id: exp.experience_id.clone(),
                    scene_id: scene.scene_id.clone(),
                    seed,
                    success: (e + s + usize::try_from(seed).unwrap()) % 2 == 0,
                });
            }
        }
    }
    for (e, base) in [("e0", "b0"), ("e1", "b1")] {
        executions.push(ExecutionRecord {
            experience_id: e.into(),
            scene_id: base.into(),
            seed: 0,
            success: true,
        });
    }
    let mut embeddings = Vec::new();
    for (representation, dim) in [("pix", 3), ("dino", 2)] {
        for (k, exp) in experiences.iter().enumerate() {
            embeddings.push(EmbeddingRecord {
                representation: representation.into(),
                kind: EmbeddingKind::Experience,
                id: exp.experience_id.clone(),
                vector: (0..dim).map(|d| 0.1 * (k + d) as f32 - 0.3).collect(),
            });
        }
        for (k, scene) in scenes.iter().enumerate() {
            embeddings.push(EmbeddingRecord {
                representation: representation.into(),
                kind: EmbeddingKind::Scene,
                id: scene.scene_id.clone(),
                vector: (0..dim).map(|d| 1.0 / (1 + k + d) as f32).collect(),
            });
        }
    }
    let selections = Some(vec![
        SelectionRecord {
            scene_id: "s0".into(),
            experience_id: "e1".into(),
        },
        SelectionRecord {
            scene_id: "s1".into(),
            experience_id: "e0".into(),
        },
        SelectionRecord {
            scene_id: "s2".into(),
            experience_id: "e2".into(),
        },
    ]);
    RetrievalInputs {
        executions,
        scenes,
        experiences,
        embeddings,
        selections,
    }
}

/// Writes `inputs` into `dir`, every file with extension `ext`, and returns the paths.
pub fn write_run(dir: &Path, inputs: &RetrievalInputs, ext: &str) -> RetrievalPaths {
    let paths = RetrievalPaths {
        executions: dir.join(format!("executions.{ext}")),
        scenes: dir.join(format!("scenes.{ext}")),
        experiences: dir.join(format!("experiences.{ext}")),
        embeddings: dir.join(format!("embeddings.{ext}")),
        selections: inputs
            .selections
            .as_ref()
            .map(|_| dir.join(format!("selections.{ext}"))),
    };
    write_executions(&paths.executions, &inputs.executions).unwrap();
    write_scenes(&paths.scenes, &inputs.scenes).unwrap();
    write_experiences(&paths.experiences, &inputs.experiences).unwrap();
    write_embeddings(&paths.embeddings, &inputs.embeddings).unwrap();
    if let (Some(selections), Some(path)) = (&inputs.selections, &paths.selections) {
        write_selections(path, selections).unwrap();
    }
    paths
}

/// Writes `text` to `dir/name` and returns the path.
pub fn write_text(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// Asserts that `err` names `file`, `row` and `column` both structurally and in its message,
/// that the message contains `needle`, and that the path comes last.
pub fn assert_names(
    err: &DataError,
    file: &Path,
    row: Option<usize>,
    column: Option<&str>,
    needle: &str,
) {
    let text = err.to_string();
    assert_eq!(err.file(), file, "{text}");
    assert_eq!(err.row(), row, "{text}");
    assert_eq!(err.column(), column, "{text}");
    assert!(
        text.ends_with(&format!(" {}", file.display())),
        "path not last: {text}"
    );
    match (row, column) {
        (Some(r), Some(c)) => assert!(
            text.starts_with(&format!("row {r}, column \"{c}\": ")),
            "{text}"
        ),
        (Some(r), None) => assert!(text.starts_with(&format!("row {r}: ")), "{text}"),
        _ => {}
    }
    assert!(text.contains(needle), "missing {needle:?} in: {text}");
}
