//! Query latency: round trips measured by the client and the server's own `infer_ms`, summarized
//! as median and 95th percentile for run manifests.

/// Median and 95th percentile of query round trips, and of the server's reported inference.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LatencySummary {
    /// Queries timed.
    pub queries: usize,
    /// Median round trip (ms), `None` without queries.
    pub median_ms: Option<f64>,
    /// 95th percentile round trip (ms; linear interpolation between order statistics).
    pub p95_ms: Option<f64>,
    /// Median of the server's `infer_ms` over the answers that carried it.
    pub server_infer_median_ms: Option<f64>,
}

/// Quantile `q` (clamped to [0, 1]) of the finite values of `v`, with linear interpolation
/// (NumPy's default, so figures match a NumPy check); `None` when none is finite.
pub fn quantile(v: &[f64], q: f64) -> Option<f64> {
    let mut s: Vec<f64> = v.iter().copied().filter(|x| x.is_finite()).collect();
    if s.is_empty() {
        return None;
    }
    s.sort_by(f64::total_cmp);
    let h = (s.len() - 1) as f64 * q.clamp(0.0, 1.0);
    let lo = h.floor() as usize;
    let hi = h.ceil() as usize;
    Some(s[lo] + (h - lo as f64) * (s[hi] - s[lo]))
}

impl LatencySummary {
    /// The summary of round trips `rtt` and server times `server` (ms).
    pub fn of(rtt: &[f64], server: &[f64]) -> LatencySummary {
        LatencySummary {
            queries: rtt.len(),
            median_ms: quantile(rtt, 0.5),
            p95_ms: quantile(rtt, 0.95),
            server_infer_median_ms: quantile(server, 0.5),
        }
    }
}
