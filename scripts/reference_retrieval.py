#!/usr/bin/env python3
"""Independent NumPy / scikit-learn reference implementation of the retrieval audit (SPEC.md §1).

Pinned versions: Python 3.11, numpy 2.2.6, scipy 1.15.3, scikit-learn 1.6.1.

    python scripts/reference_retrieval.py INPUT_DIR OUT_JSON [--resamples N] [--permutations N]
                                          [--seed S] [--csls-k K] [--check-sklearn]

INPUT_DIR holds executions.csv, scenes.csv, experiences.csv, embeddings.csv (see
examples/retrieval/README.md). The output follows the audit.json contract (schema
"roboaudit.retrieval.v1"). It is written independently of the Rust engine (crate
roboaudit-retrieval) so that the two can check each other; it is also the speed reference.

Readings of SPEC.md §1 that the text leaves open (the same list is in
crates/roboaudit-retrieval/tests/data/reference/README.md; the Rust engine must agree):

* P[e,s] = mean success over the seeds of cell (e,s). Executions whose scene is not a query scene
  and equals the experience's base_scene_id are own-base executions; they never enter P.
* Ties in every argmin/argmax (selection rules, top pick, best-fixed experience) go to the lowest
  library index (experiences.csv row order).
* Rates built from counts are compared exactly (SPEC.md §0): P[e,s] = Y[e,s] / L with whole numbers
  Y over the least common multiple L of the cells' execution counts, so q(e), the best-fixed
  argmax, the oracle's tied maxima and fractional shares (Fractions), O = R, "P constant" and the
  own-base ranks are exact; reported values are float(Fraction), the nearest float. A float mean
  would split equal rates in the last bits and break their ties.
* Cosine distance d = 1 - <a,b>/(|a||b|) on the raw vectors; L2 = Euclidean on the raw vectors.
* CSLS(e,s) = 2cos(e,s) - r_S(e) - r_E(s) on L2-normalised vectors; r_S(e) = mean cosine of e to its
  k_S = min(k, n) most similar scenes, r_E(s) = mean cosine of s to its k_E = min(k, K) most similar
  experiences (k = csls_k, default 10). Selection = argmax CSLS; AUROC score = CSLS.
* Mutual proximity as in scikit-hubness (skhubness.reduction.MutualProximity): the scene s is the
  query, the K library experiences are the index, and j runs over the library. D = cosine
  distance matrix (K x n, D[e,s] = d_es), dee = experience-experience cosine distances (diagonal 0):
      MPsim_emp(e,s) = #{j in library : dee[e,j] > D[e,s] and D[j,s] > D[e,s]} / K
  (strict >; N = K, the number of indexed candidates, as scikit-hubness divides by n_indexed;
  j = e never counts because D[e,s] > D[e,s] is false, so whether e's own zero distance is in its
  index row does not matter). Gaussian ("normal"):
      MPsim_gauss(e,s) = SF(d_es; mu_s, sd_s) * SF(d_es; mu_e, sd_e),
  mu_s/sd_s = mean/std (ddof 0) of D[:,s] (the query's distances to all K experiences), mu_e/sd_e
  over e's distances to the other K-1 experiences (scikit-hubness fits the index with
  kneighbors(X=None), which leaves self out). sd == 0 gives the step limit of SF (1 below mu, 0.5
  at mu, 0 above) where scipy would return NaN. MP distance = 1 - MPsim; selection = argmax MPsim;
  AUROC score = MPsim.
* Pooled AUROC: one sample per execution in a query scene (own-base executions excluded), score =
  -cosine distance / -L2 distance / CSLS / MPsim for the rule, label = success; the Mann-Whitney
  statistic with average ranks (= sklearn roc_auc_score, asserted with --check-sklearn);
  null when only one class occurs. Within-query AUROC: the same per query scene; a scene is eligible
  when it has both classes; the value is the mean over eligible scenes; within_query_ci is a
  percentile scene bootstrap on the shared resamples of all n scenes: a resample's statistic is the
  mean AUROC over the eligible scenes it drew (repeats counted); resamples that drew none are
  dropped; null when fewer than 2 resamples remain. Rules without a score (random, oracle,
  best_fixed, recency, track_record) have null AUROC fields.
* Selection distribution f(e) = share of query scenes that select e (every experience listed, zeros
  included). T = max f; T_O = max_e f_O(e) where each scene gives 1/|argmax_e P[e,s]| to each of its
  tied best experiences (f_O sums to 1). C = T / T_O. Entropy in nats, effective number exp(entropy).
  Top pick = argmax f (lowest index on ties); margin = q(top) - mean_e q(e).
* Advantage A = (SR - R)/(O - R); advantage_unstable = (O - R < 0.05); A = null when O - R == 0.
* Shuffle: expected = sum_e f(e) q(e) (exact); envelope = numpy.quantile (linear) at 0.025/0.975 of
  SR over `permutations` random permutations of the scene assignment of the rule's selections;
  inside = lo <= SR <= hi. Gap G = SR - expected.
* gap_ci: percentile scene bootstrap (n draws with replacement from the n query scenes); in each
  resample SR, f and q are recomputed over the resampled scenes (with multiplicity) and G* = SR* -
  sum f* q*; significant when lo > 0 or hi < 0. gap_by_set.{appearance,layout}: G of the same
  selections recomputed over that subset only (f, q, SR within the subset); null when empty.
* Variance shares: scene = sum_s K (pbar_s - pbar)^2 / sum_{e,s} (P - pbar)^2, experience = sum_e n
  (pbar_e - pbar)^2 / same; null when the denominator is 0.
* Own-base Spearman: over experiences with an own-base success (own_base_success column, or when
  empty the mean of that experience's executions in its base scene), scipy.stats.spearmanr of
  own-base success against q(e) over query scenes other than base_scene_id; null when fewer than 2
  experiences qualify or either side is constant.
* Random-number streams (numpy default_rng): np.random.SeedSequence(seed).spawn(4) -> streams for
  (random rule, track record, shuffles, bootstrap). One permutation matrix and one bootstrap
  index matrix (resamples x n scenes) are drawn once and shared by all rules and statistics.
  Random and track-record rules are seeded differently from the Rust engine; their values agree
  only in distribution.
* Track record: Thompson sampling over the scenes in file order, Beta(1,1) priors, theta_e ~
  Beta(a_e, b_e), pick argmax theta (lowest index on ties), observe the outcome of one execution of
  that cell drawn uniformly among its seeds, update (a, b).
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import sys
from collections import OrderedDict
from fractions import Fraction
from pathlib import Path

import numpy as np
from scipy import stats
from sklearn.metrics import roc_auc_score

SCHEMA = "roboaudit.retrieval.v1"
UNSTABLE_DENOMINATOR = 0.05
SKLEARN_CHECK = False  # assert every AUROC equals sklearn roc_auc_score (set by --check-sklearn)


# ----------------------------------------------------------------------------------------------
# Loading
# ----------------------------------------------------------------------------------------------


def _read_csv(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


class Inputs:
    """Validated audit inputs: transfer matrix, scene/experience attributes, embeddings."""

    def __init__(self, input_dir: Path):
        exp_rows = _read_csv(input_dir / "experiences.csv")
        scene_rows = _read_csv(input_dir / "scenes.csv")
        exec_rows = _read_csv(input_dir / "executions.csv")
        emb_rows = _read_csv(input_dir / "embeddings.csv")

        self.exp_ids = [r["experience_id"] for r in exp_rows]
        self.scene_ids = [r["scene_id"] for r in scene_rows]
        self.K, self.n = len(self.exp_ids), len(self.scene_ids)
        if self.K == 0 or self.n == 0:
            raise ValueError("empty library or scene set")
        e_index = {e: i for i, e in enumerate(self.exp_ids)}
        s_index = {s: i for i, s in enumerate(self.scene_ids)}
        if len(e_index) != self.K or len(s_index) != self.n:
            raise ValueError("duplicate experience or scene id")
        self.base_scene = [r.get("base_scene_id") or None for r in exp_rows]
        self.recorded_at = [
            int(r["recorded_at"]) if r.get("recorded_at", "") != "" else None for r in exp_rows
        ]
        self.perturbation = np.array([r["perturbation"] for r in scene_rows])

        succ = np.zeros((self.K, self.n))
        cnt = np.zeros((self.K, self.n), dtype=np.int64)
        # per-cell execution outcomes in file order (track record draws one of them)
        cell_outcomes: dict[tuple[int, int], list[int]] = {}
        own_succ = np.zeros(self.K)
        own_cnt = np.zeros(self.K, dtype=np.int64)
        seen = set()
        self.exec_e, self.exec_s, self.exec_y = [], [], []
        for r in exec_rows:
            e, s, y = r["experience_id"], r["scene_id"], int(r["success"])
            key = (e, s, r["seed"])
            if key in seen:
                raise ValueError(f"duplicate execution {key}")
            seen.add(key)
            if e not in e_index:
                raise ValueError(f"unknown experience {e}")
            ei = e_index[e]
            if s in s_index:
                si = s_index[s]
                succ[ei, si] += y
                cnt[ei, si] += 1
                cell_outcomes.setdefault((ei, si), []).append(y)
                self.exec_e.append(ei)
                self.exec_s.append(si)
                self.exec_y.append(y)
            elif s == self.base_scene[ei]:
                own_succ[ei] += y
                own_cnt[ei] += 1
            else:
                raise ValueError(f"execution in unknown scene {s}")
        missing = np.argwhere(cnt == 0)
        if len(missing):
            ei, si = missing[0]
            raise ValueError(f"missing cell ({self.exp_ids[ei]}, {self.scene_ids[si]})")
        self.P = succ / cnt
        # Exact rates (SPEC.md §0): P = Y / L; every comparison keyed on a rate uses these.
        self.L = math.lcm(*(int(c) for c in np.unique(cnt)))
        dtype = np.int64 if self.L * self.n < 2**62 else object
        self.Y = (succ.astype(np.int64) * (self.L // cnt)).astype(dtype)
        self.cell_outcomes = cell_outcomes
        self.exec_e = np.array(self.exec_e)
        self.exec_s = np.array(self.exec_s)
        self.exec_y = np.array(self.exec_y)
        self.scene_masks = [np.flatnonzero(self.exec_s == s) for s in range(self.n)]

        own = []
        for i, r in enumerate(exp_rows):
            v = r.get("own_base_success", "")
            if v != "":
                own.append(Fraction(float(v)))  # the binary fraction the decimal parses to
            elif own_cnt[i] > 0:
                own.append(Fraction(int(own_succ[i]), int(own_cnt[i])))
            elif self.base_scene[i] is not None and self.base_scene[i] in s_index:
                own.append(Fraction(int(self.Y[i, s_index[self.base_scene[i]]]), self.L))
            else:
                own.append(None)
        self.own_base = own
        self.base_scene_index = [s_index.get(b) if b is not None else None for b in self.base_scene]

        reps: "OrderedDict[str, dict]" = OrderedDict()
        for r in emb_rows:
            rep = reps.setdefault(r["representation"], {"experience": {}, "scene": {}})
            vec = np.array(r["vector"].split(), dtype=np.float64)
            rep[r["kind"]][r["id"]] = vec
        self.embeddings: "OrderedDict[str, tuple[np.ndarray, np.ndarray]]" = OrderedDict()
        for name, rep in reps.items():
            try:
                Ze = np.stack([rep["experience"][e] for e in self.exp_ids])
                Zs = np.stack([rep["scene"][s] for s in self.scene_ids])
            except KeyError as err:
                raise ValueError(f"representation {name} lacks an embedding for {err}") from err
            if Ze.shape[1] != Zs.shape[1]:
                raise ValueError(f"representation {name}: dimension mismatch")
            self.embeddings[name] = (Ze, Zs)


# ----------------------------------------------------------------------------------------------
# Scores and selections
# ----------------------------------------------------------------------------------------------


def first_argmax(x: np.ndarray, axis: int = 0) -> np.ndarray:
    """np.argmax already returns the first (lowest-index) maximum."""
    return np.argmax(x, axis=axis)


def cosine_matrix(Ze: np.ndarray, Zs: np.ndarray) -> np.ndarray:
    ne = np.linalg.norm(Ze, axis=1)
    ns = np.linalg.norm(Zs, axis=1)
    if np.any(ne == 0) or np.any(ns == 0):
        raise ValueError("zero-norm embedding: cosine undefined")
    return (Ze / ne[:, None]) @ (Zs / ns[:, None]).T


def l2_matrix(Ze: np.ndarray, Zs: np.ndarray) -> np.ndarray:
    diff = Ze[:, None, :] - Zs[None, :, :]
    return np.sqrt(np.einsum("ijk,ijk->ij", diff, diff))


def csls_matrix(cos: np.ndarray, k: int) -> np.ndarray:
    K, n = cos.shape
    kS, kE = min(k, n), min(k, K)
    r_S = np.mean(-np.sort(-cos, axis=1)[:, :kS], axis=1)  # per experience, over scenes
    r_E = np.mean(-np.sort(-cos, axis=0)[:kE, :], axis=0)  # per scene, over experiences
    return 2.0 * cos - r_S[:, None] - r_E[None, :]


def experience_cosine_distances(Ze: np.ndarray) -> np.ndarray:
    U = Ze / np.linalg.norm(Ze, axis=1)[:, None]
    dee = 1.0 - U @ U.T
    np.fill_diagonal(dee, 0.0)
    return dee


def mp_empirical_matrix(D: np.ndarray, dee: np.ndarray) -> np.ndarray:
    """scikit-hubness empiric MP (scenes query the library): j over the library, N = K."""
    K = D.shape[0]
    a = dee[:, :, None] > D[:, None, :]  # [e, j, s]: d(e, j) > d(e, s)
    b = D[None, :, :] > D[:, None, :]  # [e, j, s]: d(j, s) > d(e, s)
    return (a & b).sum(axis=1).astype(np.float64) / float(K)


def _sf_step(d: np.ndarray, mu: np.ndarray, sd: np.ndarray) -> np.ndarray:
    out = stats.norm.sf(d, mu, np.where(sd > 0, sd, 1.0))
    step = np.where(d < mu, 1.0, np.where(d == mu, 0.5, 0.0))
    return np.where(sd > 0, out, step)


def mp_gaussian_matrix(D: np.ndarray, dee: np.ndarray) -> np.ndarray:
    """scikit-hubness normal MP: experience moments over its distances to the other K-1 experiences,
    scene moments over its distances to the K experiences; sd = 0 gives the step limit."""
    K = D.shape[0]
    off = ~np.eye(K, dtype=bool)
    vals = dee[off].reshape(K, K - 1) if K > 1 else np.zeros((K, 0))
    mu_e = vals.mean(axis=1) if K > 1 else np.zeros(K)
    sd_e = vals.std(axis=1, ddof=0) if K > 1 else np.zeros(K)
    mu_s, sd_s = D.mean(axis=0), D.std(axis=0, ddof=0)
    shape = D.shape
    return (_sf_step(D, np.broadcast_to(mu_e[:, None], shape), np.broadcast_to(sd_e[:, None], shape))
            * _sf_step(D, np.broadcast_to(mu_s[None, :], shape), np.broadcast_to(sd_s[None, :], shape)))


def thompson(inp: Inputs, rng: np.random.Generator) -> np.ndarray:
    a = np.ones(inp.K)
    b = np.ones(inp.K)
    sel = np.empty(inp.n, dtype=np.int64)
    for s in range(inp.n):
        theta = rng.beta(a, b)
        e = int(first_argmax(theta))
        sel[s] = e
        outcomes = inp.cell_outcomes[(e, s)]
        y = outcomes[int(rng.integers(len(outcomes)))]
        a[e] += y
        b[e] += 1 - y
    return sel


# ----------------------------------------------------------------------------------------------
# Diagnostics
# ----------------------------------------------------------------------------------------------


def reference_points(Y: np.ndarray, L: int, exp_ids: list[str]) -> dict | None:
    """Reference points of the scenes (columns) of Y = P * L, exactly."""
    m = Y.shape[1]
    if m == 0:
        return None
    q = [Fraction(int(v), L * m) for v in Y.sum(axis=1)]
    R = sum(q) / len(q)
    O = Fraction(int(Y.max(axis=0).sum()), L * m)
    bf = int(np.argmax(Y.sum(axis=1)))  # whole numbers: the first exact maximum
    return {
        "n_scenes": m,
        "random": float(R),
        "oracle": float(O),
        "best_fixed": float(q[bf]),
        "best_fixed_experience": exp_ids[bf],
        "headroom": float(O - q[bf]),
        "quality": {e: float(v) for e, v in zip(exp_ids, q)},
        "_exact": {"R": R, "O": O, "q": q, "bf": bf},
    }


def oracle_top_share(Y: np.ndarray) -> Fraction:
    """T_O: each scene splits 1 equally over its exactly tied best experiences (Y compared as
    whole numbers); the largest mean share, exactly."""
    best = Y == Y.max(axis=0, keepdims=True)
    ties = [int(t) for t in best.sum(axis=0)]
    lt = math.lcm(*ties)
    w = np.array([lt // t for t in ties], dtype=np.int64 if lt * len(ties) < 2**62 else object)
    share = (best.astype(w.dtype) * w[None, :]).sum(axis=1)
    return Fraction(int(max(share)), lt * Y.shape[1])


def gap_of(P: np.ndarray, sel: np.ndarray, cols: np.ndarray) -> float | None:
    if len(cols) == 0:
        return None
    Psub = P[:, cols]
    s_sub = sel[cols]
    sr = float(Psub[s_sub, np.arange(len(cols))].mean())
    f = np.bincount(s_sub, minlength=P.shape[0]) / len(cols)
    return sr - float(f @ Psub.mean(axis=1))


def interval(x: np.ndarray) -> list[float]:
    lo, hi = np.quantile(x, [0.025, 0.975])
    return [float(lo), float(hi)]


def auroc(x: np.ndarray, y: np.ndarray) -> float | None:
    """Mann-Whitney AUROC with average ranks for ties; None with one class. Equal to sklearn
    roc_auc_score (asserted to 1e-12 when SKLEARN_CHECK is set, as make_retrieval_cases.py does);
    the rank form avoids sklearn's per-call validation overhead, which would dominate the timing."""
    npos = int(y.sum())
    nneg = len(y) - npos
    if npos == 0 or nneg == 0:
        return None
    ranks = stats.rankdata(x)
    value = float((ranks[y == 1].sum() - npos * (npos + 1) / 2.0) / (npos * nneg))
    if SKLEARN_CHECK:
        check = float(roc_auc_score(y, x))
        assert abs(check - value) <= 1e-12, (check, value)
    return value


def auroc_block(score: np.ndarray, inp: Inputs, W: np.ndarray) -> dict:
    y = inp.exec_y
    x = score[inp.exec_e, inp.exec_s]
    per_scene = np.array([auroc(x[m], y[m]) for m in inp.scene_masks], dtype=object)
    eligible = np.array([a is not None for a in per_scene])
    m = int(eligible.sum())
    out = {"pooled_auroc": auroc(x, y), "within_query_eligible": m}
    if m == 0:
        out.update(within_query_auroc=None, within_query_ci=None)
        return out
    a = np.where(eligible, [v if v is not None else 0.0 for v in per_scene], 0.0).astype(np.float64)
    # scene bootstrap over all n scenes (the shared resamples); a resample's statistic is the
    # mean AUROC over its drawn eligible scenes, repeats counted; resamples without one are dropped
    num = W @ a
    den = W @ eligible.astype(np.float64)
    ok = den > 0
    ci = interval(num[ok] / den[ok]) if ok.sum() >= 2 else None
    out.update(within_query_auroc=float(a[eligible].mean()), within_query_ci=ci)
    out["_wq_draws"] = num[ok] / den[ok]
    return out


def rule_diagnostics(name: str, sel: np.ndarray, inp: Inputs, ctx: dict,
                     score: np.ndarray | None) -> dict:
    P, K, n = inp.P, inp.K, inp.n
    ref = ctx["ref"]
    q = ctx["q"]
    cols = np.arange(n)
    psel = P[sel, cols]
    sr = float(psel.mean())
    R, O = ref["random"], ref["oracle"]
    exact = ref["_exact"]
    denom = float(exact["O"] - exact["R"])  # exactly 0 only when O = R
    adv = None if exact["O"] == exact["R"] else (sr - R) / denom
    f = np.bincount(sel, minlength=K) / n
    top = int(first_argmax(f))
    T = float(f[top])
    T_O = ctx["T_O"]
    nz = f[f > 0]
    entropy = float(-(nz * np.log(nz)).sum())
    expected = float(f @ q)
    gap = sr - expected

    # frequency-matched shuffle (shared permutation matrix)
    perms = ctx["perms"]
    sr_perm = np.take(P.ravel(), sel[perms] * n + cols[None, :]).mean(axis=1)
    env = interval(sr_perm)

    # scene bootstrap of G via count matrix W (B x n)
    W = ctx["W"]
    onehot = np.zeros((n, K))
    onehot[cols, sel] = 1.0
    sr_b = W @ psel / n
    f_b = W @ onehot / n
    g_b = sr_b - np.einsum("bk,bk->b", f_b, ctx["q_b"])
    gap_ci = interval(g_b)

    out = {
        "name": name,
        "success": sr,
        "advantage": adv,
        "advantage_unstable": bool(denom < UNSTABLE_DENOMINATOR),
        "selection": {e: float(v) for e, v in zip(inp.exp_ids, f)},
        "top_pick": inp.exp_ids[top],
        "top_pick_share": T,
        "oracle_top_pick_share": T_O,
        # C > 1 is a comparison of rates: C is the exact fraction, rounded once
        "concentration": float(Fraction(int(np.bincount(sel, minlength=K)[top]), n) / ctx["T_O_exact"]),
        "entropy": entropy,
        "effective_number": math.exp(entropy),
        "top_pick_margin": float(exact["q"][top] - exact["R"]),
        "shuffle": {"expected": expected, "envelope": env, "inside": bool(env[0] <= sr <= env[1])},
        "gap": gap,
        "gap_ci": gap_ci,
        "gap_significant": bool(gap_ci[0] > 0 or gap_ci[1] < 0),
        "gap_by_set": {
            k: gap_of(P, sel, np.flatnonzero(inp.perturbation == k)) for k in ("appearance", "layout")
        },
    }
    if score is None:
        out.update(pooled_auroc=None, within_query_auroc=None, within_query_eligible=None,
                   within_query_ci=None)
    else:
        out.update(auroc_block(score, inp, ctx["W"]))
    draws = {"env": sr_perm, "gap_ci": g_b, "wq_ci": out.pop("_wq_draws", None)}
    if ctx.get("keep_draws"):  # raw Monte-Carlo draws, for make_retrieval_cases.py's tolerances
        out["_draws"] = draws
    return out


def variance_shares(P: np.ndarray, Y: np.ndarray) -> dict:
    K, n = P.shape
    if np.all(Y == Y.flat[0]):  # constant exactly, not "zero after rounding"
        return {"scene": None, "experience": None}
    pbar = P.mean()
    total = float(((P - pbar) ** 2).sum())
    scene = float(K * ((P.mean(axis=0) - pbar) ** 2).sum()) / total
    exp = float(n * ((P.mean(axis=1) - pbar) ** 2).sum()) / total
    return {"scene": scene, "experience": exp}


def own_base_spearman(inp: Inputs) -> float | None:
    xs, ys = [], []
    for e in range(inp.K):
        if inp.own_base[e] is None:
            continue
        b = inp.base_scene_index[e]
        cols = np.array([s for s in range(inp.n) if s != b])
        if len(cols) == 0:
            continue
        xs.append(inp.own_base[e])
        ys.append(Fraction(int(inp.Y[e, cols].sum()), inp.L * len(cols)))
    if len(xs) < 2 or len(set(xs)) == 1 or len(set(ys)) == 1:
        return None
    # spearmanr fed the exact values: whole numbers over one common denominator.
    return float(stats.spearmanr(whole_numbers(xs), whole_numbers(ys)).statistic)


def whole_numbers(values: list[Fraction]) -> np.ndarray:
    """Fractions as Python ints over their common denominator (exact, order-preserving)."""
    den = math.lcm(*(v.denominator for v in values))
    return np.array([int(v * den) for v in values], dtype=object)


# ----------------------------------------------------------------------------------------------
# Audit
# ----------------------------------------------------------------------------------------------


def audit(inp: Inputs, resamples: int = 10_000, permutations: int = 10_000, seed: int = 0,
          csls_k: int = 10, keep_draws: bool = False) -> dict:
    P, K, n = inp.P, inp.K, inp.n
    rng_random, rng_tr, rng_shuffle, rng_boot = [
        np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(4)
    ]
    by_set = {"all": reference_points(inp.Y, inp.L, inp.exp_ids)}
    for k in ("appearance", "layout"):
        by_set[k] = reference_points(inp.Y[:, inp.perturbation == k], inp.L, inp.exp_ids)
    ref = by_set["all"]
    q = P.mean(axis=1)  # float q for the resampled arithmetic only; never compared

    perms = rng_shuffle.permuted(np.tile(np.arange(n), (permutations, 1)), axis=1)
    idx = rng_boot.integers(0, n, size=(resamples, n))
    W = np.zeros((resamples, n))
    np.add.at(W, (np.repeat(np.arange(resamples), n), idx.ravel()), 1.0)
    t_o = oracle_top_share(inp.Y)
    ctx = {"ref": ref, "q": q, "T_O": float(t_o), "T_O_exact": t_o, "perms": perms, "W": W,
           "q_b": W @ P.T / n, "keep_draws": keep_draws}

    rules: list[tuple[str, np.ndarray, np.ndarray | None]] = []
    rules.append(("random", rng_random.integers(0, K, size=n), None))
    rules.append(("oracle", first_argmax(P, axis=0), None))
    rules.append(("best_fixed", np.full(n, ref["_exact"]["bf"]), None))
    if all(r is not None for r in inp.recorded_at):
        rules.append(("recency", np.full(n, first_argmax(np.array(inp.recorded_at))), None))
    rules.append(("track_record", thompson(inp, rng_tr), None))
    for rep, (Ze, Zs) in inp.embeddings.items():
        cos = cosine_matrix(Ze, Zs)
        dcos = 1.0 - cos
        dl2 = l2_matrix(Ze, Zs)
        csls = csls_matrix(cos, csls_k)
        dee = experience_cosine_distances(Ze)
        mpe = mp_empirical_matrix(dcos, dee)
        mpg = mp_gaussian_matrix(dcos, dee)
        rules.append((f"nn/{rep}/cosine", first_argmax(-dcos, axis=0), -dcos))
        rules.append((f"nn/{rep}/l2", first_argmax(-dl2, axis=0), -dl2))
        rules.append((f"csls/{rep}", first_argmax(csls, axis=0), csls))
        rules.append((f"mp_empirical/{rep}", first_argmax(mpe, axis=0), mpe))
        rules.append((f"mp_gaussian/{rep}", first_argmax(mpg, axis=0), mpg))

    rule_out = [
        rule_diagnostics(name, np.asarray(sel, dtype=np.int64), inp, ctx, score)
        for name, sel, score in rules
    ]
    for points in by_set.values():
        if points is not None:
            points.pop("_exact")
    reference = {k: v for k, v in ref.items() if k not in ("quality", "n_scenes")}
    return {
        "schema": SCHEMA,
        "n_scenes": n,
        "n_experiences": K,
        "config": {"seed": seed, "resamples": resamples, "permutations": permutations,
                   "csls_k": csls_k, "level": 0.95, "cluster": "scene",
                   "tie_break": "lowest library index"},
        "reference": reference,
        "reference_by_set": by_set,
        "variance_share": variance_shares(P, inp.Y),
        "own_base_spearman": own_base_spearman(inp),
        "rules": rule_out,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("input_dir", type=Path)
    ap.add_argument("out_json", type=Path)
    ap.add_argument("--resamples", type=int, default=10_000)
    ap.add_argument("--permutations", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--csls-k", type=int, default=10)
    ap.add_argument("--check-sklearn", action="store_true",
                    help="assert every AUROC equals sklearn roc_auc_score to 1e-12")
    args = ap.parse_args(argv)
    global SKLEARN_CHECK
    SKLEARN_CHECK = args.check_sklearn
    inp = Inputs(args.input_dir)
    out = audit(inp, args.resamples, args.permutations, args.seed, args.csls_k)
    args.out_json.parent.mkdir(parents=True, exist_ok=True)
    with open(args.out_json, "w") as fh:
        json.dump(out, fh, indent=1)
        fh.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
