//! Tests of the batched draws (a separate file to keep `draws.rs` short).
#![allow(clippy::unwrap_used)]

use super::*;

/// Lemire's draw of one number below `product` from the next `next_u32` word, written in
/// the mixed radix of `bounds` (u128 arithmetic): the definition the batches must follow.
fn reference_batch(rng: &mut ChaCha8Rng, bounds: &[u64], rejected: &mut usize) -> Vec<usize> {
    let product: u128 = bounds.iter().map(|&v| u128::from(v)).product();
    let v = loop {
        let m = u128::from(rng.next_u32()) * product;
        if m % (1 << 32) >= (1u128 << 32) % product {
            break m >> 32;
        }
        *rejected += 1;
    };
    let mut digits = Vec::new();
    let mut rest = v;
    for &radix in bounds.iter().rev() {
        digits.push((rest % u128::from(radix)) as usize);
        rest /= u128::from(radix);
    }
    digits.reverse();
    digits
}

/// The batched draws equal the reference, for products near 2^24 with many rejections
/// (two bounds near 2^12 whose product leaves `2^32 mod P ≈ P/2`: about 1 word in 500 is
/// rejected), bounds above 2^24 alone in their batch (one near 2^32, rejected about a third
/// of the time), bounds of 1, mixed bounds, and 40 equal bounds (the single-pool path,
/// with a partial group of lanes).
#[test]
fn batches_are_mixed_radix_lemire_draws() {
    let cases: [(Vec<u64>, usize); 4] = [
        (vec![4_092, 4_092, 1, 3], 20_000),
        (
            vec![
                3_000_000_000,
                7,
                1,
                255,
                2,
                9,
                13,
                300,
                65_536,
                40,
                1,
                20_000_000,
            ],
            2_000,
        ),
        (vec![40; 40], 300),
        (vec![40; 37], 300),
    ];
    for (bounds, rows) in cases {
        let batches = batches_of(&bounds);
        let mut words = BlockWords::new(11, 3);
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        rng.set_stream(3);
        let mut rejected = 0;
        for _ in 0..rows {
            let mut row = vec![0; bounds.len()];
            let accepted = words.accept(&batches).words.clone();
            if bounds.iter().all(|&b| b == 40) {
                uniform_digits(&batches, &accepted, 40, &mut RowSink(&mut row));
            } else {
                digits(&batches, &bounds, &accepted, &mut RowSink(&mut row));
            }
            let mut expected = Vec::new();
            for batch in &batches {
                let b = &bounds[batch.start..batch.end];
                assert!(b.len() == 1 || b.iter().product::<u64>() <= MAX_BATCH_PRODUCT);
                expected.extend(reference_batch(&mut rng, b, &mut rejected));
            }
            assert_eq!(row, expected, "bounds {bounds:?}");
        }
        if rows == 20_000 {
            assert!(rejected > 10, "{rejected} rejections");
        }
    }
}

/// Counting a row gives the multiplicities and drawn set of the row itself, with one pool
/// (more and fewer than 64 clusters, rows with and without a shorter last batch, and a
/// single cluster) and with strata.
#[test]
fn counts_are_those_of_the_row() {
    let designs = [
        ResampleDesign {
            n_clusters: 40,
            strata: None,
        },
        ResampleDesign {
            n_clusters: 10,
            strata: None,
        },
        ResampleDesign {
            n_clusters: 64,
            strata: None,
        },
        ResampleDesign {
            n_clusters: 2,
            strata: None,
        },
        ResampleDesign {
            n_clusters: 130,
            strata: None,
        },
        ResampleDesign {
            n_clusters: 1,
            strata: None,
        },
        ResampleDesign {
            n_clusters: 77,
            strata: Some((0..77).map(|i| i % 3).collect()),
        },
        ResampleDesign {
            n_clusters: 7,
            strata: Some(vec![0, 1, 1, 2, 2, 2, 9]),
        },
    ];
    for design in designs {
        let n = design.n_clusters;
        let pools = StratumPools::for_design(&design, 1).unwrap();
        let (mut a, mut b) = (BlockWords::new(4, 1), BlockWords::new(4, 1));
        let mut row = vec![0; n];
        let mut block = BlockCounts::new(n);
        block.counts.fill(7);
        block.bits.fill(u64::MAX);
        for rows in [64, 1, 17] {
            pools.fill_block(&mut a, rows, &mut block);
            assert_eq!(block.rows(), rows);
            for r in 0..rows {
                let mut want = vec![0u32; n];
                pools.fill_row(&mut b, &mut row);
                row.iter().for_each(|&c| want[c] += 1);
                let (counts, bits) = block.row(r);
                assert_eq!(counts, want);
                for c in 0..n {
                    assert_eq!(bits[c / 64] >> (c % 64) & 1 == 1, want[c] > 0);
                }
            }
        }
    }
}

/// Forty clusters: ten batches of four indices, one word each.
#[test]
fn forty_clusters_take_ten_words() {
    let lens: Vec<usize> = batches_of(&[40; 40])
        .iter()
        .map(|b| b.end - b.start)
        .collect();
    assert_eq!(lens, vec![4; 10]);
}
