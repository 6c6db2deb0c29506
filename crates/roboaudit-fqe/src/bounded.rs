//! Independent jobs run at most `rayon::current_num_threads()` at a time.
//!
//! A job that installs a rayon pool of its own (candle's image encoder, for one) and
//! is driven by `par_iter` from rayon workers does not respect the thread limit: a worker that
//! waits for another pool keeps stealing jobs of its own, so every job starts at once, even with
//! `RAYON_NUM_THREADS=1`. Driving the jobs from scoped plain threads, which never steal, keeps the
//! number of busy threads at the limit whatever a job does inside.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;

/// `f(0), …, f(n − 1)`, at most `rayon::current_num_threads()` of them running at once, in index
/// order whatever the schedule. A panic in `f` is propagated.
pub(crate) fn run_bounded<T: Send>(n: usize, f: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let threads = rayon::current_num_threads().clamp(1, n.max(1));
    let next = AtomicUsize::new(0);
    let (tx, rx) = mpsc::channel();
    std::thread::scope(|s| {
        for _ in 0..threads {
            let tx = tx.clone();
            let (next, f) = (&next, &f);
            s.spawn(move || {
                loop {
                    let k = next.fetch_add(1, Ordering::Relaxed);
                    if k >= n || tx.send((k, f(k))).is_err() {
                        break;
                    }
                }
            });
        }
    });
    drop(tx);
    let mut out: Vec<(usize, T)> = rx.into_iter().collect();
    out.sort_by_key(|(k, _)| *k);
    out.into_iter().map(|(_, t)| t).collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// The most jobs running at once under a rayon pool of `threads` threads, when every job
    /// installs a one-thread pool of its own (as a neural fit does).
    fn peak(threads: usize, jobs: usize) -> (usize, Vec<usize>) {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        let (running, peak) = (AtomicUsize::new(0), AtomicUsize::new(0));
        let out = pool.install(|| {
            run_bounded(jobs, |k| {
                let inner = rayon::ThreadPoolBuilder::new()
                    .num_threads(1)
                    .build()
                    .unwrap();
                inner.install(|| {
                    let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                    peak.fetch_max(now, Ordering::SeqCst);
                    std::thread::sleep(std::time::Duration::from_millis(20));
                    running.fetch_sub(1, Ordering::SeqCst);
                });
                k * 10
            })
        });
        (peak.load(Ordering::SeqCst), out)
    }

    #[test]
    fn fits_with_their_own_pools_respect_the_thread_limit() {
        let (one, out) = peak(1, 5);
        assert_eq!(one, 1);
        assert_eq!(out, vec![0, 10, 20, 30, 40]);
        let (two, _) = peak(2, 6);
        assert!(two <= 2, "{two} jobs ran at once on 2 threads");
        assert!(run_bounded(0, |k| k).is_empty());
    }
}
