//! Transfer matrix of replayed experiences: `cargo run -p roboaudit-testbed --example replay_matrix --
//! [TASK] [K]` prints, for K experiences recorded in base scenes, success in each of the 40 standard
//! query scenes (one seed), and the mean success by perturbation type.
#![allow(clippy::unwrap_used, clippy::print_stdout)]

use roboaudit_testbed::*;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let task = TaskKind::parse(args.get(1).map_or("stack", |s| s.as_str())).unwrap();
    let k: usize = args.get(2).map_or(5, |s| s.parse().unwrap());
    let mode = if args.get(3).is_some_and(|m| m == "per_anchor") {
        Retarget::PerAnchor
    } else {
        Retarget::FirstAnchor
    };
    let set = SceneSet::generate(&SceneSetSpec {
        n_base: k,
        ..SceneSetSpec::standard(task.family(), 0)
    })
    .unwrap();
    let queries: Vec<(Perturbation, CompiledScene)> = set
        .queries
        .iter()
        .map(|s| (s.perturbation, CompiledScene::new(s, 64).unwrap()))
        .collect();
    let mut by = std::collections::BTreeMap::<&str, (u32, u32)>::new();
    for (e, base) in set.base.iter().enumerate() {
        let base = CompiledScene::new(base, 64).unwrap();
        let cfg = EpisodeConfig {
            seed: e as u64,
            ..Default::default()
        };
        let exp = Experience::record(&base, task, &cfg, ExpertParams::default()).unwrap();
        let mut row = String::new();
        for (p, q) in &queries {
            let qcfg = EpisodeConfig {
                seed: 7,
                ..Default::default()
            };
            let ok = execute(&exp, q, &qcfg, mode).unwrap();
            row.push(if ok { '#' } else { '.' });
            let c = by.entry(p.name()).or_default();
            c.0 += u32::from(ok);
            c.1 += 1;
        }
        println!("e{e:02} {row}");
    }
    for (p, (s, n)) in by {
        println!("{p:11} {s}/{n} = {:.2}", f64::from(s) / f64::from(n));
    }
}
