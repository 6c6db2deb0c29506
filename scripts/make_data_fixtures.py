#!/usr/bin/env python3
"""Generate the tiny pyarrow-written Parquet fixtures of roboaudit-data's tests.

Pinned versions: Python 3.11, pyarrow 19.0.1. Deterministic (no randomness).

    python scripts/make_data_fixtures.py [OUT_DIR]   # default crates/roboaudit-data/tests/fixtures

The fixtures exercise what arrow-rs writers never produce but Python users do: int32 seeds,
dictionary-encoded and large strings, integer 0/1 success, nulls in optional columns,
list / large_list / fixed_size_list vectors of float32 and float64, timestamp columns.
Next to the Parquet files, `expected.json` holds the records each file must read as, in the
serde form of roboaudit-types (RecordedAt timestamps as {unix_seconds, nanos}).
"""

import json
import os
import sys
from datetime import datetime, timezone

import pyarrow as pa
import pyarrow.parquet as pq

OUT = sys.argv[1] if len(sys.argv) > 1 else "crates/roboaudit-data/tests/fixtures"


def write(name, table):
    pq.write_table(table, os.path.join(OUT, name), compression="snappy")


def main():
    os.makedirs(OUT, exist_ok=True)
    expected = {}

    # Executions: dictionary experience ids, large_string scenes, int32 seeds, bool success.
    exps = ["e0", "e0", "e1", "e1", "e0", "e1"]
    scenes = ["s0", "s0", "s0", "s0", "b0", "b1"]
    seeds = [0, 1, 0, 1, 0, 0]
    success = [True, False, True, True, True, False]
    write("executions_dict_int32.parquet", pa.table({
        "experience_id": pa.array(exps).dictionary_encode(),
        "scene_id": pa.array(scenes, type=pa.large_string()),
        "seed": pa.array(seeds, type=pa.int32()),
        "success": pa.array(success, type=pa.bool_()),
        "episode_steps": pa.array([10, 20, 30, 40, 50, 60], type=pa.int16()),  # ignored extra
    }))
    # Same log with integer 0/1 success (int8) and plain utf8.
    write("executions_int_success.parquet", pa.table({
        "experience_id": pa.array(exps, type=pa.string()),
        "scene_id": pa.array(scenes, type=pa.string()),
        "seed": pa.array(seeds, type=pa.int64()),
        "success": pa.array([int(s) for s in success], type=pa.int8()),
    }))
    expected["executions"] = [
        {"experience_id": e, "scene_id": s, "seed": k, "success": ok}
        for e, s, k, ok in zip(exps, scenes, seeds, success)
    ]

    # Scenes: dictionary perturbation, int32 levels, extra float and string columns with nulls.
    write("scenes.parquet", pa.table({
        "scene_id": ["s0", "s1"],
        "perturbation": pa.array(["layout", "appearance"]).dictionary_encode(),
        "layout_level": pa.array([2, 0], type=pa.int32()),
        "appearance_draw": pa.array([0, 3], type=pa.int32()),
        "light": pa.array([0.5, None], type=pa.float64()),
        "note": pa.array([None, "dim"], type=pa.string()),
    }))
    expected["scenes"] = [
        {"scene_id": "s0", "perturbation": "layout", "layout_level": 2,
         "appearance_draw": 0, "extra": {"light": "0.5"}},
        {"scene_id": "s1", "perturbation": "appearance", "layout_level": 0,
         "appearance_draw": 3, "extra": {"note": "dim"}},
    ]

    # Experiences: nulls in every optional column; recorded_at as timestamp[us, UTC].
    t0 = datetime(2024, 5, 1, 12, 0, 0, 250000, tzinfo=timezone.utc)
    t1 = datetime(1969, 12, 31, 23, 59, 59, tzinfo=timezone.utc)
    write("experiences_timestamps.parquet", pa.table({
        "experience_id": ["e0", "e1", "e2"],
        "base_scene_id": pa.array(["b0", None, "b2"], type=pa.string()),
        "recorded_at": pa.array([t0, t1, None], type=pa.timestamp("us", tz="UTC")),
        "own_base_success": pa.array([0.75, None, 1.0], type=pa.float64()),
    }))
    # Integer orders as int32.
    write("experiences_orders.parquet", pa.table({
        "experience_id": ["e0", "e1"],
        "recorded_at": pa.array([7, None], type=pa.int32()),
    }))
    expected["experiences_timestamps"] = [
        {"experience_id": "e0", "base_scene_id": "b0",
         "recorded_at": {"unix_seconds": int(t0.timestamp()), "nanos": 250000000},
         "own_base_success": 0.75},
        {"experience_id": "e1", "base_scene_id": None,
         "recorded_at": {"unix_seconds": int(t1.timestamp()), "nanos": 0},
         "own_base_success": None},
        {"experience_id": "e2", "base_scene_id": "b2", "recorded_at": None,
         "own_base_success": 1.0},
    ]
    expected["experiences_orders"] = [
        {"experience_id": "e0", "base_scene_id": None, "recorded_at": 7, "own_base_success": None},
        {"experience_id": "e1", "base_scene_id": None, "recorded_at": None,
         "own_base_success": None},
    ]

    # Embeddings: one file per list flavour; the values are exact in float32.
    rows = [("pix", "experience", "e0", [0.5, -1.0, 2.0]),
            ("pix", "scene", "s0", [0.25, 0.0, -4.0]),
            ("dino", "experience", "e0", [1.5, 3.0, -0.125])]
    rep = pa.array([r[0] for r in rows]).dictionary_encode()
    kind = pa.array([r[1] for r in rows], type=pa.string())
    ids = pa.array([r[2] for r in rows], type=pa.large_string())
    vecs = [r[3] for r in rows]
    for name, vtype in [
        ("embeddings_list_f32.parquet", pa.list_(pa.float32())),
        ("embeddings_large_list_f64.parquet", pa.large_list(pa.float64())),
        ("embeddings_fixed_f32.parquet", pa.list_(pa.float32(), 3)),
    ]:
        write(name, pa.table({"representation": rep, "kind": kind, "id": ids,
                              "vector": pa.array(vecs, type=vtype)}))
    expected["embeddings"] = [
        {"representation": r, "kind": k, "id": i, "vector": v} for r, k, i, v in rows
    ]

    # Bad inputs: a null seed (row 2), a NaN vector element (row 2), a null list element (row 1).
    write("bad_executions_null_seed.parquet", pa.table({
        "experience_id": ["e0", "e0"], "scene_id": ["s0", "s0"],
        "seed": pa.array([0, None], type=pa.int32()), "success": [True, False],
    }))
    write("bad_embeddings_nan.parquet", pa.table({
        "representation": ["pix", "pix"], "kind": ["experience", "scene"], "id": ["e0", "s0"],
        "vector": pa.array([[1.0, 2.0], [float("nan"), 1.0]], type=pa.list_(pa.float32())),
    }))
    write("bad_embeddings_null_element.parquet", pa.table({
        "representation": ["pix"], "kind": ["experience"], "id": ["e0"],
        "vector": pa.array([[1.0, None]], type=pa.list_(pa.float32())),
    }))
    write("bad_executions_float_seed.parquet", pa.table({
        "experience_id": ["e0"], "scene_id": ["s0"],
        "seed": pa.array([1.5], type=pa.float64()), "success": [True],
    }))

    with open(os.path.join(OUT, "expected.json"), "w") as f:
        json.dump(expected, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
