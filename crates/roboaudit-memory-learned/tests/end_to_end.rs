//! Train tiny → open for the audit → crossed-history collection → audit: the learned policy
//! goes through the harness like a built-in one.

mod common;
use common::tiny;

use roboaudit_memory_harness::{CollectConfig, collect};
use roboaudit_memory_learned::checkpoint::save;
use roboaudit_memory_learned::qualify::open_for_audit;
use roboaudit_testbed::TaskKind;

#[test]
fn tiny_checkpoint_is_collected_and_audited() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tiny(0, 0.0);
    save(tmp.path(), &t).unwrap();
    let (mut policy, qual) = open_for_audit(tmp.path(), TaskKind::PutBack).unwrap();
    assert_eq!(qual.episodes, 2);
    let run = collect(
        &CollectConfig {
            pairs: 3,
            action_seeds: vec![0, 1],
            ..CollectConfig::default()
        },
        &mut policy,
        &mut |_, _| {},
    )
    .unwrap();
    assert_eq!(run.manifest.policy, "learned-recurrent-put_back");
    assert_eq!(run.manifest.memory_spec.components[0].name, "hidden");
    // 3 pairs × 2 memories × 2 seeds × 2 worlds.
    assert_eq!(run.records.len(), 24);
    // The policy is deterministic: both action seeds give the same chunk per memory.
    for pair in run.records.chunks(8) {
        if pair[0].present_equal {
            assert_eq!(pair[0].action, pair[4].action);
        }
    }
    let audit =
        roboaudit_memory::analyze(&run.records, &roboaudit_memory::Plan::default()).unwrap();
    assert_eq!(audit.n_records, 24);
}
