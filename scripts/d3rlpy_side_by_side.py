"""roboaudit's FQE estimators beside d3rlpy's FQE on the Meta-World bridge's dataset (not CI).

Pinned: d3rlpy 2.8.1 (torch 2.15.0 from PyPI, CPU use only), numpy, scipy, pyarrow as installed by
scripts/d3rlpy_side_by_side.sh in its own virtual environment (d3rlpy pins gymnasium 1.0.0,
which conflicts with metaworld's).

Input: a folder written by `python -m roboaudit_metaworld fqe` (dataset/, policies/,
ground_truth.json). Features: every estimator in the main rows sees the same state: Meta-World's
39-value observation (`observation.state`); roboaudit also gets the task (its task embedding)
and its default time input (each frame's position in its episode), d3rlpy gets a one-hot task
appended to the observation, and with --d3rlpy-time the position too. In the timed rows both
read the state as columns (`--features none`: standardized, no components); with --accuracy
roboaudit reads it as its frame features (`--features state:observation.state --state-feature
none`: standardized and reduced to principal components, each of which the network standardizes
again), its own best way to take a state vector (--accuracy-raw-state keeps the columns). roboaudit is additionally run with its
default image + state features (raw 32×32 pixels, 64 principal components) for the linear
estimator. Metrics follow roboaudit (SPEC.md §3): suite Spearman across policies of the
task-averaged estimate against the task-averaged V^π; median ARE |V̂ − V|/V over (policy, task)
cells with V > 0.

d3rlpy's FQE takes a deterministic policy `π(s')` for the target; a stochastic target is given as
a lookup of the policy-actions file that returns one of the frame's M samples at random each time
(an unbiased sample of the expected next value). Terminal flags: every episode's last frame
(success or horizon), as in roboaudit.

Usage: python scripts/d3rlpy_side_by_side.py --run DIR --roboaudit target/debug/roboaudit
       --out DIR [--steps 5000] [--seed 0] [--target-update 100] [--threads 1,2] [--d3rlpy-lr 1e-4]
       [--one-sample] [--no-linear]
       [--accuracy --d3rlpy-lr 1e-4,3e-4,1e-3 [--seeds 0,1,2] [--d3rlpy-time]]

In the timed rows both neural estimators get the same gradient steps, batch (256), hidden width
(256: d3rlpy's 256-256 MLP encoder), target-copy period and seed; otherwise each keeps its own
defaults (roboaudit: AdamW 1e-3 decayed and its input embeddings; d3rlpy: Adam at --d3rlpy-lr,
default its own 1e-4).
Each neural estimator runs once per --threads value (one thread: pinned to core 0 with
`taskset` when it exists; roboaudit `--threads N`, d3rlpy `torch.set_num_threads(N)`), and the
table gives ms per gradient step (neural training wall time over steps × fits, so with two
threads it is the throughput), d3rlpy's ms over roboaudit's, median ARE and Spearman. roboaudit
averages the policy-actions file's M samples in every Bellman target where d3rlpy takes one: at
M > 1 roboaudit does more work per step. --one-sample cuts every policy-actions file to its first
sample (a copy in OUT/run-one-sample) so that both do the same work.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import shutil
import socket
import subprocess
import time
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
from scipy.stats import spearmanr


def load(run: Path):
    data = pq.read_table(
        run / "dataset/data/chunk-000/file-000.parquet",
        columns=["observation.state", "action", "next.success", "episode_index", "task_index", "index"],
    )
    state = np.array(data.column("observation.state").to_pylist(), dtype=np.float32)
    action = np.array(data.column("action").to_pylist(), dtype=np.float32)
    success = np.array(data.column("next.success").to_pylist(), dtype=bool)
    episode = data.column("episode_index").to_numpy()
    task = data.column("task_index").to_numpy()
    index = data.column("index").to_numpy()
    assert (index == np.arange(len(index))).all(), "frames must be in global index order"
    truth = json.loads((run / "ground_truth.json").read_text())
    return state, action, success, episode, task, truth


def policy_file(run: Path, name: str, n: int) -> np.ndarray:
    t = pq.read_table(run / f"policies/{name}.parquet")
    idx = t.column("index").to_numpy()
    acts = np.array(t.column("action").to_pylist(), dtype=np.float32)
    m = len(idx) // n
    assert m * n == len(idx) and (idx == np.repeat(np.arange(n), m)).all()
    return acts.reshape(n, m, -1)


def one_sample_run(run: Path, out: Path) -> Path:
    """A copy of `run` whose policy-actions files keep only sample 0 of each frame (the dataset
    linked, ground_truth.json copied with `samples` 1): both estimators then do equal work, one
    target action per next state, where roboaudit would otherwise average all M."""
    import pyarrow.compute as pc

    dst = out / "run-one-sample"
    (dst / "policies").mkdir(parents=True, exist_ok=True)
    if not (dst / "dataset").exists():
        (dst / "dataset").symlink_to((run / "dataset").resolve())
    truth = json.loads((run / "ground_truth.json").read_text())
    for p in truth["policies"]:
        t = pq.read_table(run / p["actions_file"])
        pq.write_table(t.filter(pc.equal(t.column("sample"), 0)), dst / p["actions_file"])
        p["samples"] = 1
    (dst / "ground_truth.json").write_text(json.dumps(truth, indent=2))
    return dst


def metrics(est: dict, truth: dict) -> dict:
    """est[(policy, task_index)] → V̂; roboaudit's suite Spearman and median ARE."""
    suite_e, suite_v, ares = [], [], []
    for p in truth["policies"]:
        cells = [(est[(p["policy"], t["task_index"])], t["v_pi"]) for t in p["tasks"]]
        suite_e.append(np.mean([c[0] for c in cells]))
        suite_v.append(np.mean([c[1] for c in cells]))
        ares += [abs(e - v) / v for e, v in cells if v > 0]
    rho = spearmanr(suite_e, suite_v).statistic if np.std(suite_e) > 0 else float("nan")
    return {"spearman": float(rho), "median_are": float(np.median(ares)), "suite_estimates": [float(x) for x in suite_e]}


def pinned(threads: int) -> list[str]:
    """`taskset -c 0` for a one-thread run when taskset exists, else nothing."""
    return ["taskset", "-c", "0"] if threads == 1 and shutil.which("taskset") else []


def roboaudit(bin_: str, run: Path, out: Path, extra: list[str], reuse: bool = False,
              threads: int = 1) -> tuple[dict, float]:
    """Runs `roboaudit fqe fit --threads N` into `out`, or with `reuse` reads a finished fit there
    (fqe.json and the wall time it took, wall_s.txt). The wall time is the neural batch's when the
    fit printed it (`neural FQE: K fits in S s`, returned per fit), else the whole run's."""
    if not (reuse and (out / "wall_s.txt").is_file()):
        t0 = time.time()
        out.mkdir(parents=True, exist_ok=True)
        with (out / "stdout.txt").open("w") as log, (out / "stderr.txt").open("w") as err:
            subprocess.run([*pinned(threads), bin_, "fqe", "fit", "--run", str(run), "--out", str(out),
                            "--threads", str(threads), *extra], check=True,
                           stdout=log, stderr=err, env={"PATH": "/usr/bin:/bin"})
        wall = time.time() - t0
        m = re.search(r"neural FQE: (\d+) fits in ([0-9.]+) s", (out / "stderr.txt").read_text())
        if m:
            wall = float(m.group(2)) / int(m.group(1))
        (out / "wall_s.txt").write_text(f"{wall:.3f}\n")
    wall = float((out / "wall_s.txt").read_text())
    rep = json.loads((out / "fqe.json").read_text())
    est = {}
    for p in rep["policies"]:
        for c in p["tasks"]:
            for k in ("neural", "linear", "naive"):
                v = c.get(k)
                if isinstance(v, dict):
                    v = v.get("mean")
                if v is not None:
                    est.setdefault(k, {})[(p["policy"], c["task_index"])] = float(v)
    return est, wall


def d3rlpy_fqe(*args, **kwargs) -> tuple[dict, float]:
    """d3rlpy's FQE per policy ([`_d3rlpy_fqe`]), run in this process: its one-thread run pins
    the process to core 0, so the affinity it found is restored on return (a roboaudit fit
    started afterwards inherits it)."""
    saved = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
    try:
        return _d3rlpy_fqe(*args, **kwargs)
    finally:
        if saved is not None:
            os.sched_setaffinity(0, saved)


def _d3rlpy_fqe(
    run: Path, out: Path, truth: dict, steps: int, seed: int, target_update: int,
    threads: int = 1, lr: float = 1e-4, time_input: bool = False,
) -> tuple[dict, float]:
    """d3rlpy's FQE per policy; returns the estimates and the training wall time per policy.
    `time_input` appends each frame's position in its episode to the observation, as roboaudit's
    default time input does."""
    import logging

    import d3rlpy
    import structlog
    import torch

    os.chdir(out)  # d3rlpy writes a d3rlpy_logs/ folder into the working directory
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    torch.set_num_threads(threads)
    if threads == 1 and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {0})
    state, action, success, episode, task, _ = load(run)
    n_tasks = int(task.max()) + 1
    obs = np.concatenate([state, np.eye(n_tasks, dtype=np.float32)[task]], axis=1)
    if time_input:
        starts = np.insert(episode[1:] != episode[:-1], 0, True)
        first = np.maximum.accumulate(np.where(starts, np.arange(len(episode)), 0))
        obs = np.concatenate([obs, (np.arange(len(episode)) - first)[:, None].astype(np.float32)], axis=1)
    # Standardized here rather than by d3rlpy's scaler: the policy lookup needs the exact float32
    # rows that reach `predict_best_action` (d3rlpy scales batches before that call).
    mu, sd = obs.mean(0), obs.std(0)
    obs = ((obs - mu) / np.where(sd > 1e-6, sd, 1.0)).astype(np.float32)
    last = np.append(episode[1:] != episode[:-1], True)
    dataset = d3rlpy.dataset.MDPDataset(
        observations=obs, actions=action, rewards=success.astype(np.float32),
        terminals=last.astype(np.float32),
    )
    lookup = {row.tobytes(): g for g, row in enumerate(obs)}
    firsts = np.flatnonzero(np.insert(episode[1:] != episode[:-1], 0, True))
    est: dict = {}
    calls = {"rows": 0, "missed": 0}
    trained = 0.0
    for p in truth["policies"]:
        acts = policy_file(run, p["policy"], len(obs))
        rng = np.random.default_rng([seed, len(est)])

        def pi(x, acts=acts, rng=rng):
            rows = x.detach().cpu().numpy().astype(np.float32)
            out = np.zeros((len(rows), acts.shape[2]), dtype=np.float32)
            calls["rows"] += len(rows)
            for k, r in enumerate(rows):
                g = lookup.get(r.tobytes())
                if g is None:  # the next state of a terminal transition (masked)
                    calls["missed"] += 1
                else:
                    out[k] = acts[g, rng.integers(acts.shape[1])]
            return torch.from_numpy(out).to(x.device)

        d3rlpy.seed(seed)
        algo = d3rlpy.algos.DDPGConfig().create(device="cpu:0")
        algo.build_with_dataset(dataset)
        algo.impl.predict_best_action = pi
        fqe = d3rlpy.ope.FQE(
            algo=algo,
            config=d3rlpy.ope.FQEConfig(
                gamma=truth["gamma"], batch_size=256, target_update_interval=target_update,
                learning_rate=lr,
            ),
            device="cpu:0",
        )
        t0 = time.time()
        fqe.fit(dataset, n_steps=steps, n_steps_per_epoch=steps, show_progress=False,
                save_interval=10**9, with_timestamp=False,
                logger_adapter=d3rlpy.logging.NoopAdapterFactory())
        trained += time.time() - t0
        for k in range(n_tasks):
            f = firsts[task[firsts] == k]
            q = [fqe.predict_value(obs[f], acts[f, j]) for j in range(acts.shape[1])]
            est[(p["policy"], k)] = float(np.mean(q))
    terminal_share = float(last.mean())
    print(f"d3rlpy target lookups: {calls['missed']} of {calls['rows']} rows unknown "
          f"(terminal transitions are {terminal_share:.1%} of the data)")
    if calls["missed"] > 3 * terminal_share * calls["rows"] + 100:
        raise SystemExit("policy lookup failed: next observations do not match dataset rows")
    return est, trained / len(truth["policies"])


def accuracy(a: argparse.Namespace, truth: dict) -> None:
    """Each estimator at its own best settings over the --seeds: roboaudit's defaults (auto steps
    under the --steps cap, learning rate 1e-3 decayed, the target period --target-update or
    roboaudit's default, which d3rlpy then shares; one fit over all seeds, whose estimate is
    the mean over seeds) and d3rlpy at every --d3rlpy-lr for --steps, one fit per seed, the
    estimate of a cell the mean over seeds as in roboaudit. Per-seed median AREs are printed too."""
    threads = int(a.threads.split(",")[0])
    seeds = [int(s) for s in a.seeds.split(",")]
    tag = ("" if seeds == [0] else "-seeds" + "_".join(map(str, seeds))) + ("-t" if a.d3rlpy_time else "")
    rows = []
    ra_dir = a.out / ("ra-neural-auto" + ("" if seeds == [0] else "-seeds" + "_".join(map(str, seeds))))
    period = [] if a.target_update is None else ["--target-update", str(a.target_update)]
    if a.accuracy_raw_state:
        features = ["--features", "none"]
    else:
        features = ["--features", "state:observation.state", "--state-feature", "none"]
        ra_dir = ra_dir.with_name(ra_dir.name + "-components")
    ra, _ = roboaudit(a.roboaudit, a.run, ra_dir,
                      [*features, "--seeds", ",".join(map(str, seeds)),
                       "--max-steps", str(a.steps), *period],
                      a.reuse, threads=threads)
    fit = json.loads((ra_dir / "fqe.json").read_text())
    # The period roboaudit used (its own default when none was given) is d3rlpy's too.
    a.target_update = fit["neural_config"]["target_update_every"]
    made = sum(sum(p["neural_steps"]) for p in fit["policies"])
    net = fit["neural_config"]
    per_seed = [m["median_are"] for m in next(
        m for m in fit["metrics"] if m["estimator"] == "neural")["suite_per_seed"]]
    rows.append(("roboaudit neural (defaults, auto)", "1e-3", made, ra["neural"], per_seed))
    t_tag = "-t" if a.d3rlpy_time else ""
    for lr in [float(x) for x in a.d3rlpy_lr.split(",")]:
        fits = []
        for seed in seeds:
            cache = a.out / (f"d3rlpy-lr{lr:g}-p{a.target_update}{t_tag}.json" if seed == 0
                             else f"d3rlpy-lr{lr:g}-p{a.target_update}{t_tag}-seed{seed}.json")
            if a.reuse and cache.is_file():
                est = {(k.rsplit("|", 1)[0], int(k.rsplit("|", 1)[1])): v
                       for k, v in json.loads(cache.read_text()).items()}
            else:
                est, _ = d3rlpy_fqe(a.run, a.out, truth, a.steps, seed, a.target_update, threads, lr,
                                    a.d3rlpy_time)
                cache.write_text(json.dumps({f"{p}|{t}": v for (p, t), v in est.items()}))
            fits.append(est)
        mean = {k: float(np.mean([f[k] for f in fits])) for k in fits[0]}
        rows.append((f"d3rlpy FQE (state + task{' + t' if a.d3rlpy_time else ''})", f"{lr:g}",
                     a.steps * len(truth["policies"]) * len(seeds),
                     mean, [metrics(f, truth)["median_are"] for f in fits]))
    print(f"\n{'estimator':36s} {'lr':>6s} {'steps':>7s} {'median ARE':>11s} {'Spearman':>9s}   "
          "suite estimates   | median ARE per seed")
    table = []
    for name, lr, made, est, seed_ares in rows:
        m = metrics(est, truth)
        table.append({"estimator": name, "lr": lr, "steps": made, **m, "median_are_per_seed": seed_ares})
        print(f"{name:36s} {lr:>6s} {made:7d} {m['median_are']:11.3f} {m['spearman']:9.3f}   "
              + " ".join(f"{x:.3f}" for x in m["suite_estimates"])
              + "   | " + " ".join(f"{x:.3f}" for x in seed_ares))
    print(f"{'ground truth V (suite)':64s}          "
          + " ".join(f"{p['suite_v_pi']:.3f}" for p in truth["policies"]))
    (a.out / f"accuracy{tag}.json").write_text(json.dumps(
        {"run": str(a.run), "steps": a.steps, "seeds": seeds, "target_update": a.target_update,
         "rows": table}, indent=2))
    ra_row, d3_rows = table[0], table[1:]
    best = min(d3_rows, key=lambda r: r["median_are"])
    line = (
        f"| {datetime.date.today()} | {socket.gethostname()} ({os.cpu_count()} cores, load "
        f"{os.getloadavg()[0]:.1f}) | neural FQE accuracy, {a.run.name} run, seeds {a.seeds} (estimate: "
        f"mean over seeds), target period {a.target_update}, state features "
        f"(scripts/d3rlpy_side_by_side.sh --accuracy) "
        f"| roboaudit defaults (auto, cap {a.steps}, {net['hidden']} units, {net['batch_size']}-row "
        f"batches, inputs {' + '.join(p[0] for p in fit['inputs']['parts'])}): median ARE {ra_row['median_are']:.3f}, Spearman "
        f"{ra_row['spearman']:.3f} | d3rlpy 2.8.1{' with t' if a.d3rlpy_time else ''}, {a.steps} steps, "
        "256-row batches, median ARE at lr "
        + ", ".join(f"{r['lr']}: {r['median_are']:.3f}" for r in d3_rows)
        + f" | best d3rlpy ARE / roboaudit ARE {best['median_are'] / ra_row['median_are']:.2f} |"
    )
    with open(Path(__file__).resolve().parent.parent / "BENCHMARKS.md", "a") as f:
        f.write(line + "\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--run", type=Path, required=True)
    ap.add_argument("--roboaudit", type=lambda p: str(Path(p).resolve()), default="target/debug/roboaudit")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--steps", type=int, default=5000, help="gradient steps of both neural FQEs")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--seeds", default="0",
                    help="with --accuracy: comma-separated seeds; each estimate is the mean over them")
    ap.add_argument("--reuse-linear", action="store_true",
                    help="reuse finished linear fits in OUT/ra-linear-* (they do not depend on the neural settings)")
    ap.add_argument("--target-update", type=int, default=None,
                    help="target-network copy period of both neural FQEs (steps); default 100, "
                         "with --accuracy roboaudit's own default (from the steps and the median "
                         "episode), which d3rlpy then gets too")
    ap.add_argument("--threads", default="1,2", help="thread counts to time, comma-separated")
    ap.add_argument("--d3rlpy-lr", default="1e-4",
                    help="d3rlpy FQE's learning rate; with --accuracy a comma-separated list to sweep")
    ap.add_argument("--d3rlpy-time", action="store_true",
                    help="with --accuracy: give d3rlpy the time input too (position in the episode)")
    ap.add_argument("--reuse", action="store_true", help="with --accuracy: reuse the fits finished in OUT")
    ap.add_argument("--accuracy-raw-state", action="store_true",
                    help="with --accuracy: roboaudit reads the state as columns (--features none) "
                         "rather than as principal components")
    ap.add_argument("--one-sample", action="store_true",
                    help="timing at equal work: both estimators read policy-actions files cut to "
                         "one sample per frame (roboaudit averages all M otherwise)")
    ap.add_argument("--no-linear", action="store_true",
                    help="skip the linear and naive rows (the neural timing alone)")
    ap.add_argument("--accuracy", action="store_true",
                    help="accuracy only: roboaudit at its defaults (--steps auto, capped at --steps) "
                         "against d3rlpy at each --d3rlpy-lr for --steps, no timing or linear rows")
    a = ap.parse_args()
    a.run, a.out = a.run.resolve(), a.out.resolve()
    a.out.mkdir(parents=True, exist_ok=True)
    truth = json.loads((a.run / "ground_truth.json").read_text())
    if a.accuracy:
        accuracy(a, truth)
        return
    if a.target_update is None:
        a.target_update = 100
    a.d3rlpy_lr = float(a.d3rlpy_lr)
    if a.one_sample:
        a.run = one_sample_run(a.run, a.out)
        truth = json.loads((a.run / "ground_truth.json").read_text())
    work = "one target sample each (equal work)" if a.one_sample else "roboaudit all M samples"
    rows = []
    if not a.no_linear:
        lin, t_lin = roboaudit(a.roboaudit, a.run, a.out / "ra-linear-state",
                               ["--no-neural", "--features", "none"], a.reuse_linear)
        rows.append(("roboaudit linear FQE (state)", lin["linear"], t_lin))
        # The naive average comes from the same run (its wall time is that run's).
        rows.append(("naive average", lin["naive"], t_lin))
        img, t_img = roboaudit(a.roboaudit, a.run, a.out / "ra-linear-image", ["--no-neural"],
                               a.reuse_linear)
        rows.append(("roboaudit linear FQE (image+state)", img["linear"], t_img))
    threads = [int(t) for t in a.threads.split(",")]
    timed = []  # (name, threads, estimates, seconds per fit)
    for t in threads:
        neu, t_neu = roboaudit(a.roboaudit, a.run,
                               a.out / f"ra-neural-state-t{t}{'-one-sample' if a.one_sample else ''}",
                               ["--features", "none", "--steps", str(a.steps), "--seeds", str(a.seed),
                                "--target-update", str(a.target_update), "--batch-size", "256",
                                "--hidden", "256"], threads=t)
        rows.append((f"roboaudit neural FQE (state), {t} thr", neu["neural"], t_neu))
        timed.append(("roboaudit", t, neu["neural"], t_neu))
        d3, t_d3 = d3rlpy_fqe(a.run, a.out, truth, a.steps, a.seed, a.target_update, t, a.d3rlpy_lr)
        rows.append((f"d3rlpy FQE (state + task), {t} thr", d3, t_d3))
        timed.append(("d3rlpy", t, d3, t_d3))
    print(f"\n{'neural FQE':10s} {'threads':>7s} {'ms/step':>8s} {'d3rlpy/ra':>9s} {'median ARE':>11s} {'Spearman':>9s}")
    per_step = {}
    for name, t, est, sec in timed:
        per_step[(name, t)] = sec * 1e3 / a.steps
    bench = []
    for name, t, est, sec in timed:
        m = metrics(est, truth)
        ratio = per_step[("d3rlpy", t)] / per_step[("roboaudit", t)]
        print(f"{name:10s} {t:7d} {per_step[(name, t)]:8.2f} {ratio:9.2f} {m['median_are']:11.3f} "
              f"{m['spearman']:9.3f}")
        if name == "roboaudit":
            d3m = metrics(dict(next(e for n, tt, e, _ in timed if n == "d3rlpy" and tt == t)), truth)
            bench.append(
                f"| {datetime.date.today()} | {socket.gethostname()} ({os.cpu_count()} cores, load "
                f"{os.getloadavg()[0]:.1f}) | neural FQE side by side, {a.run.name} run, {a.steps} steps, batch 256, hidden 256, "
                f"target period {a.target_update}, {work}, {t} thread(s){' pinned to core 0' if t == 1 else ''} "
                f"(scripts/d3rlpy_side_by_side.sh) | roboaudit {per_step[('roboaudit', t)]:.2f} ms/step, "
                f"median ARE {m['median_are']:.3f}, Spearman {m['spearman']:.3f} | d3rlpy 2.8.1 "
                f"{per_step[('d3rlpy', t)]:.2f} ms/step (lr {a.d3rlpy_lr:g}), median ARE {d3m['median_are']:.3f}, "
                f"Spearman {d3m['spearman']:.3f} | {ratio:.2f}x |")
    with open(Path(__file__).resolve().parent.parent / "BENCHMARKS.md", "a") as f:
        f.write("".join(line + "\n" for line in bench))
    table = []
    print(f"\n{'estimator':38s} {'Spearman':>9s} {'median ARE':>11s} {'wall s':>8s}   suite estimates")
    for name, est, wall in rows:
        m = metrics(est, truth)
        table.append({"estimator": name, "wall_s": wall, **m})
        rho = "—" if np.isnan(m["spearman"]) else f"{m['spearman']:.3f}"
        print(f"{name:38s} {rho:>9s} {m['median_are']:11.3f} {wall:8.1f}   "
              + " ".join(f"{x:.3f}" for x in m["suite_estimates"]))
    print("ground truth V (suite):                                                "
          + " ".join(f"{p['suite_v_pi']:.3f}" for p in truth["policies"]))
    (a.out / "side_by_side.json").write_text(json.dumps(
        {"run": str(a.run), "steps": a.steps, "seed": a.seed, "target_update": a.target_update,
         "ms_per_step": [{"estimator": n, "threads": t, "ms": per_step[(n, t)]} for n, t, _, _ in timed],
         "rows": table,
         "truth": [{"policy": p["policy"], "suite_v_pi": p["suite_v_pi"]} for p in truth["policies"]]},
        indent=2))


if __name__ == "__main__":
    main()
