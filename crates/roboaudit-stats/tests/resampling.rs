//! The documented resampling scheme: stream layout, prefix stability, uniformity.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use roboaudit_stats::{ROWS_PER_STREAM, ResampleDesign, ResampleMatrix};

/// Independent re-derivation of row `b`: stream ⌊b/64⌋ read with `next_u32`, rows of the block
/// drawn in order, each row in batches of `k` positions (`k` the most with `n^k <= 2^24`, the
/// last batch shorter), a batch being Lemire's draw of one number `v` below `n^k` (rejecting a
/// word whose low half of `word · n^k` is below `2^32 mod n^k`), written in base `n` with the
/// first position as the most significant digit.
fn expected_row(seed: u64, b: usize, n: u32) -> Vec<usize> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream((b / ROWS_PER_STREAM) as u64);
    let n = u128::from(n);
    let mut k = 1;
    while n.pow(k + 1) <= 1 << 24 {
        k += 1;
    }
    let mut row = Vec::new();
    for _ in 0..=(b % ROWS_PER_STREAM) {
        row.clear();
        while row.len() < n as usize {
            let len = (n as usize - row.len()).min(k as usize);
            let product = n.pow(len as u32);
            let v = loop {
                let m = u128::from(rng.next_u32()) * product;
                if m % (1 << 32) >= (1 << 32) % product {
                    break m >> 32;
                }
            };
            let digits: Vec<usize> = (0..len)
                .rev()
                .map(|i| ((v / n.pow(i as u32)) % n) as usize)
                .collect();
            row.extend(digits);
        }
    }
    row
}

#[test]
fn rows_follow_the_documented_stream_layout() {
    let design = ResampleDesign {
        n_clusters: 13,
        strata: None,
    };
    let m = ResampleMatrix::generate(&design, 200, 99).unwrap();
    for b in [0, 1, 63, 64, 65, 130, 199] {
        assert_eq!(
            m.row(b).unwrap(),
            expected_row(99, b, 13).as_slice(),
            "row {b}"
        );
    }
    // 40 clusters: ten batches of four per row
    let design = ResampleDesign {
        n_clusters: 40,
        strata: None,
    };
    let m = ResampleMatrix::generate(&design, 130, 7).unwrap();
    for b in [0, 5, 64, 129] {
        assert_eq!(
            m.row(b).unwrap(),
            expected_row(7, b, 40).as_slice(),
            "row {b}"
        );
    }
    assert_eq!(m.row(200), None);
}

#[test]
fn first_rows_do_not_depend_on_the_number_of_resamples() {
    let design = ResampleDesign {
        n_clusters: 9,
        strata: Some(vec![0, 1, 1, 2, 2, 2, 0, 0, 1]),
    };
    let short = ResampleMatrix::generate(&design, 70, 5).unwrap();
    let long = ResampleMatrix::generate(&design, 1_000, 5).unwrap();
    assert_eq!(short.rows(), &long.rows()[..70]);
}

#[test]
fn draws_are_uniform_over_clusters_and_within_strata() {
    let n = 10;
    let m = ResampleMatrix::generate(
        &ResampleDesign {
            n_clusters: n,
            strata: None,
        },
        20_000,
        3,
    )
    .unwrap();
    let mut counts = vec![0usize; n];
    m.rows().iter().flatten().for_each(|&i| counts[i] += 1);
    // 200,000 draws, 20,000 expected per cluster, sd ≈ 134: ±1,000 is > 7 sd
    assert!(
        counts.iter().all(|&c| c.abs_diff(20_000) < 1_000),
        "{counts:?}"
    );

    let strata = vec![0, 0, 0, 1, 1];
    let m = ResampleMatrix::generate(
        &ResampleDesign {
            n_clusters: 5,
            strata: Some(strata),
        },
        30_000,
        4,
    )
    .unwrap();
    let mut counts = vec![0usize; 5];
    m.rows().iter().flatten().for_each(|&i| counts[i] += 1);
    // stratum 0: 90,000 draws over 3 clusters; stratum 1: 60,000 over 2
    assert!(
        counts[..3].iter().all(|&c| c.abs_diff(30_000) < 1_000),
        "{counts:?}"
    );
    assert!(
        counts[3..].iter().all(|&c| c.abs_diff(30_000) < 1_000),
        "{counts:?}"
    );
    assert!(
        m.rows()
            .iter()
            .all(|r| r[..3].iter().all(|&c| c < 3) && r[3..].iter().all(|&c| c >= 3))
    );
}
