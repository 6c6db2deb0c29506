#!/usr/bin/env python3
"""Trimmed copies of the five real LeRobot datasets in ../shared/datasets, committed as CLI test
fixtures (crates/roboaudit-cli/tests/fixtures/real/), so `tests/real_datasets.rs` runs on any clean
clone. Tested with Python 3.11, pyarrow 19.0.1 and numpy 2.2.6 (no other dependency).

What is kept: a few episodes per dataset and the first `cap` frames of each; every schema oddity
of the source (Arrow types — fixed-size vs variable lists —, Parquet schema metadata of data files or its absence,
`__index_level_0__` task columns, nested or dict `names`, old-style info.json keys and indentation,
key order, split data and episode files, list<list<list<double>>> image stats, the lingzu
(length − 1)/fps video time ranges) is carried over unchanged. What changes: `episode_index` and
`index` are renumbered 0.. over the kept episodes, lengths, `dataset_from_index`/`dataset_to_index`,
video `to_timestamp` and the info.json totals follow the trim. MP4 files are not copied (the
fixtures keep the "video missing" oddity; the full datasets' video oddities are tested by the data
crate). Stats files are copied as they are (their keys, not values, are checked).

Usage: python3 scripts/trim_real_datasets.py [SRC] [DST]
  SRC defaults to ../shared/datasets, DST to crates/roboaudit-cli/tests/fixtures/real.
"""

import json
import os
import shutil
import sys

import pyarrow as pa
import pyarrow.parquet as pq

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "..", "shared", "datasets")
DST = sys.argv[2] if len(sys.argv) > 2 else os.path.join(
    ROOT, "crates", "roboaudit-cli", "tests", "fixtures", "real")

# name -> (episodes kept (source indices, in order), frame cap per episode or None)
PLAN = {
    # 12 whole episodes: max next.reward spans both sides of the 0.90 labelling threshold.
    "pusht_v30": (list(range(12)), None),
    "so101_record_test": ([0, 1, 2, 3], 100),
    # Two episodes from each of the three data/episode files, so the split survives.
    "piper_act_v30": ([0, 1, 8, 9, 50, 51], 80),
    "g1_inspire_v21": ([0, 1, 2, 3, 4, 5], 60),
    "lingzu_open50_v30": ([0, 1, 2, 3], 60),
}


def info_indent(text):
    for line in text.splitlines()[1:]:
        stripped = line.lstrip(" ")
        if stripped:
            return len(line) - len(stripped)
    return 4


def write_info(src_dir, dst_dir, episodes, frames):
    path = os.path.join(src_dir, "meta", "info.json")
    with open(path) as f:
        text = f.read()
    info = json.loads(text)
    info["total_episodes"] = episodes
    info["total_frames"] = frames
    if "splits" in info:
        info["splits"] = {"train": f"0:{episodes}"}
    if "total_chunks" in info:
        info["total_chunks"] = 1
    if "total_videos" in info:
        info["total_videos"] = episodes * sum(
            1 for v in info["features"].values() if v.get("dtype") == "video")
    os.makedirs(os.path.join(dst_dir, "meta"), exist_ok=True)
    with open(os.path.join(dst_dir, "meta", "info.json"), "w") as f:
        f.write(json.dumps(info, indent=info_indent(text), ensure_ascii=False) + "\n")


def replace(table, name, values):
    i = table.schema.get_field_index(name)
    field = table.schema.field(i)
    return table.set_column(i, field, pa.array(values, type=field.type))


def trim_rows(table, old_ep, new_ep, first_index, cap):
    """Rows of episode old_ep (first `cap` by frame_index), renumbered."""
    eps = table.column("episode_index").to_pylist()
    rows = [k for k, e in enumerate(eps) if e == old_ep]
    frames = table.column("frame_index").to_pylist()
    rows.sort(key=lambda k: frames[k])
    if cap is not None:
        rows = rows[:cap]
    part = table.take(pa.array(rows, type=pa.int64()))
    part = replace(part, "episode_index", [new_ep] * len(rows))
    part = replace(part, "index", list(range(first_index, first_index + len(rows))))
    return part


def write_parquet(table, src_file, dst_file, keep_metadata=True):
    """Writes `table` with the source file's schema metadata. Episode-metadata files
    (keep_metadata=False) drop their pandas/Arrow schema blobs: for a handful of rows those
    45 KB are most of the file, and their columns are plain lists either way."""
    meta = pq.read_schema(src_file).metadata if keep_metadata else None
    table = table.replace_schema_metadata(meta)
    os.makedirs(os.path.dirname(dst_file), exist_ok=True)
    # No column statistics: for a handful of rows they are most of the footer (fixture size).
    # Snappy, pyarrow's default: roboaudit's parquet build has no zstd.
    pq.write_table(table, dst_file, write_statistics=False, compression="snappy",
                   store_schema=keep_metadata)


def trim_v30(name, keep, cap):
    src, dst = os.path.join(SRC, name), os.path.join(DST, name)
    with open(os.path.join(src, "meta", "info.json")) as f:
        info = json.load(f)
    fps = float(info["fps"])
    ep_dir = os.path.join(src, "meta", "episodes", "chunk-000")
    meta_files = sorted(os.listdir(ep_dir))
    data_out = {}  # data file rel path -> list of tables
    meta_out = {}  # meta file name -> list of row tables
    next_index = 0
    for new_ep, old_ep in enumerate(keep):
        for mf in meta_files:
            mt = pq.read_table(os.path.join(ep_dir, mf))
            eps = mt.column("episode_index").to_pylist()
            if old_ep in eps:
                break
        row = mt.take(pa.array([eps.index(old_ep)], type=pa.int64()))
        chunk = row.column("data/chunk_index")[0].as_py()
        file = row.column("data/file_index")[0].as_py()
        rel = info["data_path"].format(chunk_index=chunk, file_index=file, episode_index=old_ep)
        data = pq.read_table(os.path.join(src, rel))
        part = trim_rows(data, old_ep, new_ep, next_index, cap)
        n = part.num_rows
        old_len = row.column("length")[0].as_py()
        row = replace(row, "episode_index", [new_ep])
        row = replace(row, "length", [n])
        row = replace(row, "dataset_from_index", [next_index])
        row = replace(row, "dataset_to_index", [next_index + n])
        for col in row.column_names:
            if col.endswith("/to_timestamp") and col.startswith("videos/"):
                start = row.column(col.replace("/to_", "/from_"))[0].as_py()
                end = row.column(col)[0].as_py()
                # Keeps the source's offset from length/fps (lingzu is one frame short).
                row = replace(row, col, [start + (end - start) - old_len / fps + n / fps])
        next_index += n
        data_out.setdefault(rel, []).append(part)
        meta_out.setdefault(mf, []).append(row)
    for rel, parts in data_out.items():
        write_parquet(pa.concat_tables(parts), os.path.join(src, rel), os.path.join(dst, rel))
    for mf, rows in meta_out.items():
        write_parquet(pa.concat_tables(rows), os.path.join(ep_dir, mf),
                      os.path.join(dst, "meta", "episodes", "chunk-000", mf), keep_metadata=False)
    for f in ["tasks.parquet", "stats.json"]:
        if os.path.exists(os.path.join(src, "meta", f)):
            shutil.copyfile(os.path.join(src, "meta", f), os.path.join(dst, "meta", f))
    write_info(src, dst, len(keep), next_index)


def trim_v21(name, keep, cap):
    src, dst = os.path.join(SRC, name), os.path.join(DST, name)
    with open(os.path.join(src, "meta", "info.json")) as f:
        info = json.load(f)
    assert keep == list(range(len(keep))), "v2.1 trimming keeps a prefix (no renumbering of files)"
    os.makedirs(os.path.join(dst, "meta"), exist_ok=True)
    next_index = 0
    lengths = {}
    for ep in keep:
        rel = info["data_path"].format(episode_chunk=0, episode_index=ep)
        data = pq.read_table(os.path.join(src, rel))
        part = trim_rows(data, ep, ep, next_index, cap)
        lengths[ep] = part.num_rows
        next_index += part.num_rows
        write_parquet(part, os.path.join(src, rel), os.path.join(dst, rel))
    for f in ["episodes.jsonl", "episodes_stats.jsonl"]:
        out = []
        with open(os.path.join(src, "meta", f)) as fh:
            for line in fh:
                if not line.strip():
                    continue
                row = json.loads(line)
                if row["episode_index"] in lengths:
                    if "length" in row:
                        row["length"] = lengths[row["episode_index"]]
                    out.append(json.dumps(row, ensure_ascii=False))
        with open(os.path.join(dst, "meta", f), "w") as fh:
            fh.write("\n".join(out) + "\n")
    shutil.copyfile(os.path.join(src, "meta", "tasks.jsonl"), os.path.join(dst, "meta", "tasks.jsonl"))
    write_info(src, dst, len(keep), next_index)


def main():
    for name, (keep, cap) in PLAN.items():
        if os.path.exists(os.path.join(DST, name)):
            shutil.rmtree(os.path.join(DST, name))
        with open(os.path.join(SRC, name, "meta", "info.json")) as f:
            version = json.load(f)["codebase_version"]
        (trim_v30 if version == "v3.0" else trim_v21)(name, keep, cap)
        print(name, "written")


if __name__ == "__main__":
    main()
