"""Writes a counterfactual-memory-audit records file with pyarrow, as a Python harness would.

Pinned: pyarrow 19.0.1 (Python 3). Output: crates/roboaudit-memory/tests/fixtures/
records_pyarrow.parquet; tests/records_io.rs checks that it reads back and audits as expected.
Types differ from the Rust writer on purpose: dictionary-encoded memory/world, int32
action_seed, float32 progress, list<float64> action.

Run from the repository root: python3 scripts/make_memory_fixtures.py
"""
import pyarrow as pa
import pyarrow.parquet as pq

rows = []
# Pair q0 is memory-faithful at both seeds; pair q1 goes to branch A whatever its memory;
# pair q2 failed the present check (excluded).
for pair, policy, present in [("q0", "faithful", True), ("q1", "always_a", True), ("q2", "faithful", False)]:
    for seed in (0, 1):
        for memory in ("A", "B"):
            branch = memory if policy == "faithful" else "A"
            action = [0.5 * seed, 1.0 if memory == "A" else -1.0, 0.25]
            if policy == "always_a":
                action = [0.5 * seed, 0.0, 0.25]
            for world in ("A", "B"):
                toward = 1.0 if branch == world else 0.0
                rows.append(dict(pair_id=pair, memory=memory, action_seed=seed, world=world,
                                 progress_warranted=toward, progress_other=1.0 - toward,
                                 value=toward, action=action, present_equal=present,
                                 stratum="left" if pair != "q1" else "right"))

table = pa.table({
    "pair_id": pa.array([r["pair_id"] for r in rows], pa.large_string()),
    "memory": pa.array([r["memory"] for r in rows]).dictionary_encode(),
    "action_seed": pa.array([r["action_seed"] for r in rows], pa.int32()),
    "world": pa.array([r["world"] for r in rows]).dictionary_encode(),
    "progress_warranted": pa.array([r["progress_warranted"] for r in rows], pa.float32()),
    "progress_other": pa.array([r["progress_other"] for r in rows], pa.float32()),
    "value": pa.array([r["value"] for r in rows], pa.float64()),
    "action": pa.array([r["action"] for r in rows], pa.list_(pa.float64())),
    "present_equal": pa.array([r["present_equal"] for r in rows], pa.bool_()),
    "stratum": pa.array([r["stratum"] for r in rows], pa.string()),
})
pq.write_table(table, "crates/roboaudit-memory/tests/fixtures/records_pyarrow.parquet")
