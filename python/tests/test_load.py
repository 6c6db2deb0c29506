"""roboaudit.load on outputs the real CLI writes (FQE, a demo) and on what it refuses."""

import json

import pytest

import roboaudit
from roboaudit.results import Demo, FqeResult, LoadError, MemoryAudit, NaturalStudy, RetrievalAudit


@pytest.fixture(scope="module")
def fqe_dir(run, tmp_path_factory):
    base = tmp_path_factory.mktemp("fqe")
    run("fqe", "collect", "--small", "--out", base / "run")
    run("fqe", "fit", "--run", base / "run", "--no-neural", "--out", base / "res")
    return base / "res"


def test_fqe_result(fqe_dir):
    res = roboaudit.load(fqe_dir)
    assert isinstance(res, FqeResult)
    raw = json.loads((fqe_dir / "fqe.json").read_text())
    est = res.tables()["estimates"]
    assert len(est) == sum(len(p["tasks"]) for p in raw["policies"])
    first = raw["policies"][0]["tasks"][0]
    assert est[0]["policy"] == raw["policies"][0]["policy"]
    assert est[0]["linear"] == first["linear"] and est[0]["naive"] == first["naive"]
    assert {m["estimator"] for m in res.tables()["metrics"]} == {m["estimator"] for m in raw["metrics"]}


def test_frames_match_tables(fqe_dir):
    pd = pytest.importorskip("pandas")
    res = roboaudit.load(fqe_dir)
    frames = res.frames()
    assert isinstance(frames["estimates"], pd.DataFrame)
    assert frames["estimates"]["linear"].tolist() == [r["linear"] for r in res.tables()["estimates"]]


def test_demo(demo_dir):
    demo = roboaudit.load(demo_dir)
    assert isinstance(demo, Demo)
    kinds = {type(p) for p in demo.parts}
    assert {MemoryAudit, FqeResult, RetrievalAudit} <= kinds
    headline = json.loads((demo_dir / "audit.json").read_text())
    assert [r.n_experiences for r in demo.retrieval] == [t["audit"]["n_experiences"] for t in headline["tasks"]]
    rules = demo.tables()["retrieval_rules"]
    assert len(rules) == sum(len(t["audit"]["rules"]) for t in headline["tasks"])
    # Stack appears under three mechanisms: the mechanism column tells its rows apart.
    assert sorted({(r["task"], r["mechanism"]) for r in rules}) == [
        ("door", "replay"), ("stack", "policy"), ("stack", "policy-dr"), ("stack", "replay")]


def test_natural_study(run, tmp_path):
    out = tmp_path / "nat"
    run("memory", "natural", "--policy", "faithful", "--episodes", "4", "--resamples", "200", "--out", out)
    res = roboaudit.load(out)
    assert isinstance(res, NaturalStudy)
    raw = json.loads((out / "natural.json").read_text())
    episodes = res.tables()["episodes"]
    assert [e["id"] for e in episodes] == [e["id"] for e in raw["episodes"]]
    decisions = sum(e["contains_decision"] for e in raw["episodes"])
    assert res.decision_fraction == (decisions, 4)
    # The faithful calibrator heads for the warranted tray in every episode: no other-first group.
    assert res.remaining_steps["estimate"] is None and res.remaining_steps["undefined_reason"]


def test_retrieval_audit_of_a_collected_run(run, tmp_path):
    r = tmp_path / "run"
    run("retrieval", "collect", "--task", "stack", "--library", "2", "--scenes", "3", "--seeds", "1", "--out", r)
    run("retrieval", "audit", "--run", r, "--resamples", "100", "--permutations", "100", "--out", r / "audit")
    res = roboaudit.load(r / "audit")
    assert isinstance(res, RetrievalAudit)
    # What was audited comes from the run's collect.json.
    assert (res.run["task"], res.run["mechanism"]) == ("stack", "replay")
    failures = res.run["appearance_caused_failures"]
    assert 0 <= failures["failed"] <= failures["executions"]


def test_refusals(tmp_path):
    with pytest.raises(LoadError, match="no audit.json, fqe.json or natural.json"):
        roboaudit.load(tmp_path)
    (tmp_path / "audit.json").write_text('{"schema": "roboaudit.other.v9"}')
    with pytest.raises(LoadError, match="roboaudit.other.v9"):
        roboaudit.load(tmp_path)
    (tmp_path / "audit.json").write_text("{not json")
    with pytest.raises(LoadError, match="audit.json"):
        roboaudit.load(tmp_path)
