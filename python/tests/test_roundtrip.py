"""Python writes an audit's inputs -> roboaudit audits them -> roboaudit.load reads the result.

The expected numbers are computed here from the rows written, independently of the Rust: the
retrieval reference points (SPEC §1: R = mean of P, O = mean over scenes of the best experience,
BF = best experience's mean) and the memory audit's known answers (SPEC §2: a policy whose action
follows its history has faithfulness 1 and changes branch with it; one that ignores it, 0 and never).
"""

import math
import random

import pytest

import roboaudit
from roboaudit import writers


def _retrieval_inputs(folder, fmt):
    rng = random.Random(7)
    experiences = [f"e{i}" for i in range(4)]
    scenes = [(f"s{j}", "appearance" if j % 2 else "layout", j % 3, j) for j in range(6)]
    # Success probability per (experience, scene), 4 seeds each: P is the mean over seeds.
    rows, P = [], {}
    for e_i, e in enumerate(experiences):
        for s_j, (s, *_rest) in enumerate(scenes):
            p = (e_i + 1) / 5 if s_j % 2 else 0.5
            outcomes = [int(rng.random() < p) for _ in range(4)]
            P[e, s] = sum(outcomes) / 4
            rows += [(e, s, seed, bool(o) if seed % 2 else o) for seed, o in enumerate(outcomes)]
    writers.write_executions(folder / f"executions.{fmt}", rows)
    writers.write_scenes(folder / f"scenes.{fmt}", scenes)
    writers.write_experiences(folder / f"experiences.{fmt}", [{"experience_id": e} for e in experiences])
    emb = [("feat", "experience", e, [float(i), 1.0, -0.5]) for i, e in enumerate(experiences)]
    emb += [("feat", "scene", s, [0.5 * j, 1.0, 0.25]) for j, (s, *_r) in enumerate(scenes)]
    writers.write_embeddings(folder / f"embeddings.{fmt}", emb)
    return experiences, [s for s, *_ in scenes], P


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "parquet"])
def test_retrieval_round_trip(tmp_path, run, fmt):
    if fmt == "parquet":
        pytest.importorskip("pyarrow")
    inputs = tmp_path / "run"
    experiences, scenes, P = _retrieval_inputs(inputs, fmt)
    run("retrieval", "audit", "--run", inputs, "--out", tmp_path / "audit", "--seed", 3, "--resamples", 200)
    audit = roboaudit.load(tmp_path / "audit")
    assert isinstance(audit, roboaudit.results.RetrievalAudit)
    assert (audit.n_scenes, audit.n_experiences) == (6, 4)
    random_ = sum(P.values()) / len(P)
    oracle = sum(max(P[e, s] for e in experiences) for s in scenes) / len(scenes)
    quality = {e: sum(P[e, s] for s in scenes) / len(scenes) for e in experiences}
    assert audit.reference["random"] == pytest.approx(random_, abs=1e-12)
    assert audit.reference["oracle"] == pytest.approx(oracle, abs=1e-12)
    assert audit.reference["best_fixed"] == pytest.approx(max(quality.values()), abs=1e-12)
    exp_rows = audit.tables()["experiences"]
    assert [r["id"] for r in exp_rows] == experiences
    assert [r["quality"] for r in exp_rows] == pytest.approx([quality[e] for e in experiences])
    best = max(experiences, key=lambda e: (quality[e], -experiences.index(e)))  # lowest index on ties
    assert audit.reference["best_fixed_experience"] == best
    assert {r["name"] for r in audit.tables()["rules"]} >= {"random", "oracle"}


def _memory_rows(follows_history: bool, pairs: int = 6, seeds=(0, 1, 2)):
    """Crossed-history records of a policy that goes to the branch its history warrants
    (follows_history) or always to branch A (blind). Action = one-hot of the branch chosen."""
    rows = []
    for p in range(pairs):
        for memory in "AB":
            branch = memory if follows_history else "A"
            action = [1.0, 0.0] if branch == "A" else [0.0, 1.0]
            for seed in seeds:
                for world in "AB":
                    hit = branch == world
                    rows.append({
                        "pair_id": f"p{p}", "memory": memory, "action_seed": seed, "world": world,
                        "progress_warranted": 1.0 if hit else 0.0, "progress_other": 0.0 if hit else 1.0,
                        "value": 1.0 if hit else 0.0, "action": action, "present_equal": True,
                    })
    return rows


@pytest.mark.parametrize("follows,expected", [(True, 1.0), (False, 0.0)])
def test_memory_round_trip_known_answers(tmp_path, run, follows, expected):
    records = writers.write_memory_records(tmp_path / "records.jsonl", _memory_rows(follows))
    run("memory", "audit", "--records", records, "--out", tmp_path / "audit", "--seed", 1)
    audit = roboaudit.load(tmp_path / "audit")
    assert isinstance(audit, roboaudit.results.MemoryAudit)
    assert audit.n_pairs == 6
    assert audit.faithfulness["value"] == pytest.approx(expected)
    # S = mean over (pair, seed) of ||a_A - a_B||: one-hot actions of two branches differ by sqrt 2.
    assert audit.sensitivity == pytest.approx(math.sqrt(2) * expected)
    assert audit.data["branch_change_rate"] == pytest.approx(expected)
    assert len(audit.tables()["pairs"]) == 6


def test_bad_executions_name_file_row_and_column(tmp_path):
    rows = [("e0", "s0", 0, 1), ("e0", "s0", 1, 0), ("e0", "s1", 0, "maybe")]
    with pytest.raises(writers.InputError) as info:
        writers.write_executions(tmp_path / "executions.csv", rows)
    err = info.value
    assert (err.row, err.column) == (3, "success")
    assert "executions.csv" in err.message and "maybe" in err.message


def test_bad_memory_records_name_the_row(tmp_path):
    rows = _memory_rows(True, pairs=2)
    rows[5]["value"] = 1.5  # outside [0, 1]
    with pytest.raises(writers.InputError) as info:
        writers.write_memory_records(tmp_path / "records.csv", rows)
    assert (info.value.row, info.value.column) == (6, "value")
    assert "records.csv" in str(info.value)


def test_policy_actions_written_and_checked(tmp_path):
    ok = [(i, s, [0.1 * i, -0.2, float(s)]) for i in range(5) for s in range(2)]
    out = writers.write_policy_actions(tmp_path / "mine.csv", ok)
    assert writers.validate("policy-actions", out) == f"ok: {out}: 5 frames x 2 samples, action width 3"
    bad = ok[:3] + [(1, 1, [0.0, 0.0])] + ok[4:]  # a narrower action in data row 4
    with pytest.raises(writers.InputError) as info:
        writers.write_policy_actions(tmp_path / "bad.jsonl", bad)
    assert (info.value.row, info.value.column) == (4, "action")
