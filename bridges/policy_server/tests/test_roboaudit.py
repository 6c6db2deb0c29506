"""roboaudit's client against this server: ``fqe actions`` and its failure modes.

Needs the roboaudit binary (``ROBOAUDIT_BIN``; scripts/ci_policy_server.sh sets it); skipped
otherwise.
"""

import io
import json
import subprocess
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
from PIL import Image

from roboaudit_policy_server.examples import state_action, stochastic_action

MASK = (1 << 64) - 1


def splitmix(z):
    z = (z + 0x9E3779B97F4A7C15) & MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def action_seed(seed, sample, index):
    """roboaudit_policy_client::dataset_actions::action_seed."""
    return splitmix(splitmix(seed ^ splitmix(sample)) ^ (index & MASK)) >> 1


def frames(dataset: Path):
    """Every frame: (index, episode, frame_index, observation dict as the client sends it)."""
    out = []
    for f in sorted((dataset / "data").rglob("*.parquet")):
        t = pq.read_table(f).to_pylist()
        for r in t:
            img = np.asarray(Image.open(io.BytesIO(r["observation.images.scene"]["bytes"])).convert("RGB"))
            obs = {"observation/state": np.asarray(r["observation.state"], np.float32),
                   "observation/image": img}
            out.append((r["index"], r["episode_index"], r["frame_index"], obs))
    return sorted(out, key=lambda x: x[0])


def actions(path: Path):
    t = pq.read_table(path).to_pylist()
    return {(r["index"], r["sample"]): np.asarray(r["action"], np.float32) for r in t}


def fqe_actions(roboaudit, dataset, url, out, *extra):
    return subprocess.run([str(roboaudit), "fqe", "actions", "--dataset", str(dataset),
                           "--policy", f"mine={url}", "--out", str(out), *extra],
                          capture_output=True, text=True)


def test_actions_equal_what_the_policy_returns_and_fit_accepts_them(roboaudit, push_dataset, server_process, tmp_path):
    ds = push_dataset / "dataset"
    url = server_process("--policy", "state", "--action-dim", "7")
    out = tmp_path / "state.parquet"
    r = fqe_actions(roboaudit, ds, url, out)
    assert r.returncode == 0, r.stderr
    got = actions(out)
    fr = frames(ds)
    assert len(got) == len(fr)
    for index, _, _, obs in fr:
        np.testing.assert_array_equal(got[(index, 0)], state_action(obs, 7))
    manifest = json.loads((tmp_path / "state.manifest.json").read_text())
    assert manifest["latency"]["queries"] == len(fr)
    assert manifest["latency"]["median_ms"] > 0
    fit = subprocess.run([str(roboaudit), "fqe", "fit", "--dataset", str(ds), "--policy-actions", f"mine={out}",
                          "--out", str(tmp_path / "fit"), "--steps", "20", "--batch-size", "16", "--seeds", "0",
                          "--components", "4"], capture_output=True, text=True)
    assert fit.returncode == 0, fit.stderr
    report = json.loads((tmp_path / "fit" / "fqe.json").read_text())
    assert "mine" in json.dumps(report)


def test_fqe_collect_rolls_out_and_queries_a_served_target(roboaudit, server_process, tmp_path):
    """``fqe collect --served-only``: ground truth by rollouts of the served policy, and its
    actions at every frame of the collected dataset equal what the Python policy returns there."""
    url = server_process("--policy", "state", "--action-dim", "7")
    out = tmp_path / "run"
    r = subprocess.run([str(roboaudit), "fqe", "collect", "--small", "--rollouts", "2", "--served-only",
                        "--policy", f"mine={url}", "--out", str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    truth = json.loads((out / "ground_truth.json").read_text())
    [p] = truth["policies"]
    assert p["policy"] == "mine" and p["served"]["url"] == url
    assert [t["n_episodes"] for t in p["tasks"]] == [2, 2, 2, 2]
    assert p["served"]["latency"]["rollouts"]["queries"] > 0
    got = actions(out / p["actions_file"])
    fr = frames(out / "dataset")
    assert len(got) == len(fr) * p["samples"]
    for index, _, _, obs in fr:
        np.testing.assert_array_equal(got[(index, 0)], state_action(obs, 7))


def test_stochastic_policy_honours_action_seeds_and_resets(roboaudit, push_dataset, server_process, tmp_path):
    ds = push_dataset / "dataset"
    url = server_process("--policy", "stochastic", "--action-dim", "7")
    a, b = tmp_path / "a.parquet", tmp_path / "b.parquet"
    assert fqe_actions(roboaudit, ds, url, a, "--samples", "2", "--seed", "3").returncode == 0
    assert fqe_actions(roboaudit, ds, url, b, "--samples", "2", "--seed", "3").returncode == 0
    got, again = actions(a), actions(b)
    for index, _, frame_index, obs in frames(ds):
        for s in range(2):
            want = stochastic_action(obs, 7, 4, action_seed(3, s, index), frame_index)
            np.testing.assert_array_equal(got[(index, s)], want)
            np.testing.assert_array_equal(again[(index, s)], want)
        assert not np.array_equal(got[(index, 0)], got[(index, 1)])


def test_plain_server_still_gives_actions(roboaudit, push_dataset, server_process, tmp_path):
    url = server_process("--policy", "state", "--action-dim", "7", "--plain")
    out = tmp_path / "plain.parquet"
    r = fqe_actions(roboaudit, push_dataset / "dataset", url, out)
    assert r.returncode == 0, r.stderr
    assert "plain openpi server" in r.stdout
    m = json.loads((tmp_path / "plain.manifest.json").read_text())
    assert m["reset_between_episodes"] is False and m["capabilities"] == []


def run_failing(roboaudit, push_dataset, server_process, tmp_path, mode, *extra):
    url = server_process("--policy", f"faulty-{mode}", "--action-dim", "7", *extra)
    out = tmp_path / f"{mode}.parquet"
    r = fqe_actions(roboaudit, push_dataset / "dataset", url, out, "--timeout", "2")
    assert not out.exists(), "nothing half-written"
    return r, out


def test_nan_actions_exit_3(roboaudit, push_dataset, server_process, tmp_path):
    r, _ = run_failing(roboaudit, push_dataset, server_process, tmp_path, "nan")
    assert r.returncode == 3, r.stderr
    assert "not finite" in r.stderr and "episode 0 frame 0" in r.stderr


def test_wrong_action_width_exit_3(roboaudit, push_dataset, server_process, tmp_path):
    r, _ = run_failing(roboaudit, push_dataset, server_process, tmp_path, "wide")
    assert r.returncode == 3, r.stderr
    assert "actions are 8 wide" in r.stderr


def test_server_exception_is_reported(roboaudit, push_dataset, server_process, tmp_path):
    r, _ = run_failing(roboaudit, push_dataset, server_process, tmp_path, "raise")
    assert r.returncode == 1, r.stderr
    assert "policy failed on purpose" in r.stderr


def test_silent_server_times_out(roboaudit, push_dataset, server_process, tmp_path):
    r, _ = run_failing(roboaudit, push_dataset, server_process, tmp_path, "hang")
    assert r.returncode == 1, r.stderr
    assert "did not answer within 2 s" in r.stderr


def test_server_dying_mid_run_is_resumable(roboaudit, push_dataset, server_process, tmp_path):
    ds = push_dataset / "dataset"
    fr = frames(ds)
    first_episode = sum(1 for f in fr if f[1] == fr[0][1])
    r, out = run_failing(roboaudit, push_dataset, server_process, tmp_path, "exit", "--after", str(first_episode + 3))
    assert r.returncode == 1, r.stderr
    assert "closed the connection" in r.stderr and "rerun the same command" in r.stderr
    partial = Path(str(out) + ".partial")
    assert len(list(partial.glob("episode-*.parquet"))) == 1
    url = server_process("--policy", "state", "--action-dim", "7")
    r = subprocess.run([str(roboaudit), "fqe", "actions", "--dataset", str(ds), "--policy", f"mine={url}",
                        "--out", str(out), "--timeout", "2"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "1 episodes resumed" in r.stdout
    got = actions(out)
    for index, _, _, obs in fr:
        np.testing.assert_array_equal(got[(index, 0)], state_action(obs, 7))
    assert not partial.exists()
    # Other settings never mix with an interrupted run's episodes.
    r = fqe_actions(roboaudit, ds, url, tmp_path / "x.parquet", "--samples", "1")
    assert r.returncode == 0


def test_served_calibrators_recover_their_known_answers(roboaudit, server_process, tmp_path):
    faithful = server_process("--policy", "faithful", "--horizon", "12")
    blind = server_process("--policy", "blind", "--horizon", "12")
    r = subprocess.run([str(roboaudit), "memory", "calibrate", "--served", f"faithful={faithful}",
                        "--served", f"blind={blind}", "--pairs", "4", "--seeds", "2",
                        "--out", str(tmp_path / "cal")], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    cal = json.loads((tmp_path / "cal" / "calibration.json").read_text())
    got = {(res["calibrator"], c["metric"]): c["got"] for res in cal["results"] for c in res["checks"]}
    assert got[("faithful", "faithfulness")] == 1.0
    assert got[("blind", "faithfulness")] == 0.0
    assert cal["passed"]


def test_memory_collect_records_latency_of_a_served_policy(roboaudit, server_process, tmp_path):
    url = server_process("--policy", "faithful", "--horizon", "12")
    out = tmp_path / "mem"
    r = subprocess.run([str(roboaudit), "memory", "collect", "--policy", f"mine={url}", "--pairs", "2",
                        "--seeds", "2", "--out", str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    m = json.loads((out / "manifest.json").read_text())
    assert m["policy"] == "mine"
    assert m["served_policy"]["capabilities"] == ["reset", "action_seed", "memory_get", "memory_set"]
    assert m["served_policy"]["latency"]["queries"] > 0
    assert m["served_policy"]["latency"]["p95_ms"] >= m["served_policy"]["latency"]["median_ms"]


def test_memory_audit_refuses_a_plain_server(roboaudit, server_process, tmp_path):
    url = server_process("--policy", "faithful", "--horizon", "12", "--plain")
    r = subprocess.run([str(roboaudit), "memory", "collect", "--policy", f"mine={url}", "--pairs", "2",
                        "--out", str(tmp_path / "mem")], capture_output=True, text=True)
    assert r.returncode == 2, r.stderr
    assert "`reset`" in r.stderr and "same empty memory" in r.stderr and "plain openpi" in r.stderr
    assert not (tmp_path / "mem" / "records.parquet").exists()
