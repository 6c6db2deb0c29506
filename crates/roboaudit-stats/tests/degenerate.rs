//! Degenerate input gives a typed error or an explicit `None`, never a panic or a made-up number.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use roboaudit_stats::{
    BootstrapConfig, Interval, IntervalMethod, ResampleDesign, ResampleMatrix, StatsError,
    absolute_relative_error, auroc, average_ranks, bootstrap, bootstrap_with_matrix, equivalent,
    grouped_auroc, kendall_tau_b, mmrv, normalized_regret_at_k, pearson, quantile, quantiles,
    spearman,
};

#[test]
fn auroc_rejects_bad_input_and_flags_one_class() {
    assert_eq!(
        auroc(&[], &[], None),
        Err(StatsError::Empty { what: "scores" })
    );
    assert!(matches!(
        auroc(&[1.0], &[true, false], None),
        Err(StatsError::LengthMismatch { .. })
    ));
    assert_eq!(
        auroc(&[1.0, f64::NAN], &[true, false], None),
        Err(StatsError::NonFinite {
            what: "scores",
            index: 1
        })
    );
    assert_eq!(
        auroc(&[1.0, 2.0], &[true, false], Some(&[1.0, -1.0])),
        Err(StatsError::InvalidWeight {
            what: "weights",
            index: 1
        })
    );
    assert_eq!(auroc(&[1.0, 2.0, 3.0], &[true, true, true], None), Ok(None));
    assert_eq!(
        auroc(&[1.0, 2.0], &[true, false], Some(&[0.0, 1.0])),
        Ok(None)
    );
    // ties between positives and negatives count one half; −0.0 ties with 0.0
    assert_eq!(
        auroc(&[0.0, -0.0, 1.0], &[true, false, false], None),
        Ok(Some(0.25))
    );
    assert_eq!(auroc(&[2.0, 1.0], &[true, false], None), Ok(Some(1.0)));
}

#[test]
fn grouped_auroc_reports_ineligible_groups() {
    let g = grouped_auroc(
        &[1.0, 2.0, 3.0, 1.0, 2.0],
        &[true, false, true, true, true],
        &[9, 9, 9, 4, 4],
        None,
    )
    .unwrap();
    assert_eq!(
        g.groups.iter().map(|x| x.group).collect::<Vec<_>>(),
        vec![4, 9]
    );
    assert_eq!(g.groups[0].auroc, None);
    assert_eq!(g.groups[1].auroc, Some(0.5));
    assert_eq!((g.n_eligible, g.mean), (1, Some(0.5)));
    let none = grouped_auroc(&[1.0, 2.0], &[true, true], &[0, 1], None).unwrap();
    assert_eq!((none.n_eligible, none.mean), (0, None));
    assert!(matches!(
        grouped_auroc(&[1.0], &[true], &[0, 1], None),
        Err(StatsError::LengthMismatch { .. })
    ));
}

#[test]
fn correlations_handle_constant_short_and_nan_input() {
    for f in [pearson, spearman, kendall_tau_b] {
        assert_eq!(f(&[1.0, 2.0, 3.0], &[4.0, 4.0, 4.0]), Ok(None));
        assert!(matches!(
            f(&[1.0], &[2.0]),
            Err(StatsError::TooFew { n: 1, min: 2, .. })
        ));
        assert_eq!(
            f(&[1.0, f64::INFINITY], &[1.0, 2.0]),
            Err(StatsError::NonFinite {
                what: "x",
                index: 1
            })
        );
        assert!(matches!(
            f(&[1.0, 2.0], &[1.0]),
            Err(StatsError::LengthMismatch { .. })
        ));
        assert_eq!(f(&[1.0, 2.0], &[3.0, 1.0]), Ok(Some(-1.0)));
    }
    assert_eq!(
        average_ranks(&[3.0, 1.0, 3.0, 2.0]).unwrap(),
        vec![3.5, 1.0, 3.5, 2.0]
    );
}

#[test]
fn quantile_rejects_bad_input() {
    assert_eq!(quantile(&[], 0.5), Err(StatsError::Empty { what: "data" }));
    assert!(matches!(
        quantile(&[1.0], 1.5),
        Err(StatsError::InvalidParameter(_))
    ));
    assert!(matches!(
        quantile(&[1.0], f64::NAN),
        Err(StatsError::InvalidParameter(_))
    ));
    assert_eq!(
        quantile(&[f64::NAN], 0.5),
        Err(StatsError::NonFinite {
            what: "data",
            index: 0
        })
    );
    assert_eq!(
        quantiles(&[4.0, 1.0, 2.0, 3.0], &[0.0, 0.5, 1.0]).unwrap(),
        vec![1.0, 2.5, 4.0]
    );
}

#[test]
fn evaluator_metrics_flag_undefined_values() {
    assert_eq!(absolute_relative_error(0.2, 0.0), Ok(None));
    assert!(matches!(
        absolute_relative_error(f64::NAN, 1.0),
        Err(StatsError::NonFinite { .. })
    ));
    assert_eq!(
        normalized_regret_at_k(&[0.1, 0.2], &[0.0, 0.0], 1),
        Ok(None)
    );
    assert!(matches!(
        normalized_regret_at_k(&[0.1], &[0.5], 0),
        Err(StatsError::InvalidParameter(_))
    ));
    assert!(matches!(
        normalized_regret_at_k(&[0.1], &[0.5], 2),
        Err(StatsError::InvalidParameter(_))
    ));
    assert!(matches!(mmrv(&[], &[]), Err(StatsError::Empty { .. })));
    // tie at the top of V̂: the lower index (truth 0.2) is taken, regret (0.8 − 0.2) / 0.8
    let r = normalized_regret_at_k(&[0.9, 0.9, 0.1], &[0.2, 0.8, 0.5], 1)
        .unwrap()
        .unwrap();
    assert!((r - 0.75).abs() < 1e-15);
    // strict comparisons: with V̂ tied, row 1 (V 0.8 > 0.2 but V̂ not >) violates, row 0 does not
    assert!((mmrv(&[0.5, 0.5], &[0.2, 0.8]).unwrap() - 0.3).abs() < 1e-15);
}

#[test]
fn resample_matrix_validates_and_is_seeded() {
    let design = ResampleDesign {
        n_clusters: 7,
        strata: None,
    };
    assert!(matches!(
        ResampleMatrix::generate(&design, 0, 1),
        Err(StatsError::InvalidParameter(_))
    ));
    let empty = ResampleDesign {
        n_clusters: 0,
        strata: None,
    };
    assert!(matches!(
        ResampleMatrix::generate(&empty, 5, 1),
        Err(StatsError::InvalidParameter(_))
    ));
    let bad = ResampleDesign {
        n_clusters: 3,
        strata: Some(vec![0, 1]),
    };
    assert!(matches!(
        ResampleMatrix::generate(&bad, 5, 1),
        Err(StatsError::InvalidParameter(_))
    ));
    let a = ResampleMatrix::generate(&design, 20, 42).unwrap();
    assert_eq!(a, ResampleMatrix::generate(&design, 20, 42).unwrap());
    assert_ne!(a, ResampleMatrix::generate(&design, 20, 43).unwrap());
    assert!(
        a.rows()
            .iter()
            .all(|r| r.len() == 7 && r.iter().all(|&i| i < 7))
    );
    assert!(matches!(
        ResampleMatrix::from_rows(vec![vec![0, 3]], 2),
        Err(StatsError::InvalidParameter(_))
    ));
    assert!(matches!(
        ResampleMatrix::from_rows(vec![vec![0]], 2),
        Err(StatsError::InvalidParameter(_))
    ));
    assert!(matches!(
        ResampleMatrix::from_rows(vec![], 2),
        Err(StatsError::InvalidParameter(_))
    ));
}

#[test]
fn bootstrap_reports_undefined_statistics() {
    let design = ResampleDesign {
        n_clusters: 4,
        strata: None,
    };
    let config = BootstrapConfig {
        resamples: 200,
        ..BootstrapConfig::default()
    };
    assert!(matches!(
        bootstrap(&design, &config, |_| None),
        Err(StatsError::TooFew { .. })
    ));
    // defined only without repeated clusters: one defined resample of three, so no interval
    let distinct = |idx: &[usize]| {
        (idx.iter()
            .all(|i| idx.iter().filter(|&j| j == i).count() == 1))
        .then_some(1.0)
    };
    let rows = vec![vec![0, 0, 1, 2], vec![3, 2, 1, 0], vec![1, 1, 1, 1]];
    let m = ResampleMatrix::from_rows(rows, 4).unwrap();
    let r = bootstrap_with_matrix(&m, 0.95, IntervalMethod::Percentile, distinct).unwrap();
    assert_eq!(
        (
            r.interval,
            r.standard_error,
            r.undefined_resamples,
            r.resamples
        ),
        (None, None, 2, 3)
    );
    // constant statistic: percentile interval is the point; BCa is undefined (SciPy gives NaN)
    let r = bootstrap(&design, &config, |_| Some(2.0)).unwrap();
    assert_eq!(
        r.interval,
        Some(Interval {
            lo: 2.0,
            hi: 2.0,
            level: 0.95
        })
    );
    let bca = BootstrapConfig {
        method: IntervalMethod::Bca,
        ..config.clone()
    };
    assert_eq!(
        bootstrap(&design, &bca, |_| Some(2.0)).unwrap().interval,
        None
    );
    let bad_level = BootstrapConfig {
        level: 1.0,
        ..config
    };
    assert!(matches!(
        bootstrap(&design, &bad_level, |_| Some(1.0)),
        Err(StatsError::InvalidParameter(_))
    ));
    let m = ResampleMatrix::from_rows(vec![vec![0, 0]], 2).unwrap();
    let nan = bootstrap_with_matrix(&m, 0.9, IntervalMethod::Percentile, |i| {
        Some(if i[1] == 0 { f64::NAN } else { 1.0 })
    });
    assert!(matches!(nan, Err(StatsError::NonFinite { .. })));
}

#[test]
fn equivalence_needs_the_whole_interval_inside_the_margin() {
    assert!(equivalent(
        &Interval {
            lo: -0.04,
            hi: 0.05,
            level: 0.9
        },
        0.05
    ));
    assert!(!equivalent(
        &Interval {
            lo: -0.06,
            hi: 0.01,
            level: 0.9
        },
        0.05
    ));
    assert!(!equivalent(
        &Interval {
            lo: -0.2,
            hi: 0.2,
            level: 0.9
        },
        0.05
    ));
}
