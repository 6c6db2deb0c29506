//! Same records and plan give the same bytes for any thread count.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{build, chunk, goes_to, plan, stays};
use roboaudit_memory::{MemoryLabel, analyze, render_summary_markdown};

#[test]
fn thread_count_determinism() {
    let mut records = build(40, &[0, 1, 2], |p, m, k| {
        match (p + usize::try_from(k).unwrap()) % 4 {
            0 => goes_to(m.other(), chunk(m)),
            1 => stays(chunk(m)),
            _ => goes_to(m, chunk(m)),
        }
    });
    for r in &mut records {
        let p: usize = r.pair_id[1..].parse().unwrap();
        r.stratum = Some(format!("layout{}", p % 3));
    }
    let run = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            let audit = analyze(&records, &plan(3_000)).unwrap();
            (
                serde_json::to_vec_pretty(&audit).unwrap(),
                render_summary_markdown(&audit),
            )
        })
    };
    let one = run(1);
    assert_eq!(one, run(2));
    assert_eq!(one, run(4));
    // A different seed changes the intervals (so the comparison above is not vacuous).
    let mut other = plan(3_000);
    other.bootstrap.seed = 1;
    let audit = analyze(&records, &other).unwrap();
    assert_ne!(serde_json::to_vec_pretty(&audit).unwrap(), one.0);
    assert_eq!(MemoryLabel::BOTH.len(), 2);
}
