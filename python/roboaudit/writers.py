"""Write the audits' input files from a Python harness, checked by the CLI's own readers.

Each writer writes one file (format by extension: ``.csv``, ``.jsonl``/``.ndjson``, or
``.parquet`` when pyarrow is installed), then runs ``roboaudit validate KIND FILE``, the reader
the audit itself uses (crates/roboaudit-data), and raises :class:`InputError` with the CLI's
message, naming the file, row and column, when the file would be refused. Row numbers count
data rows from 1 (the header is not counted), as in every roboaudit error.

Columns (README, "Using it on your own data"; the Rust readers are the reference):

- executions (``retrieval audit --executions``): ``experience_id`` str, ``scene_id`` str,
  ``seed`` int, ``success`` 0/1 or bool;
- scenes: ``scene_id``, ``perturbation`` (``appearance`` | ``layout`` | ``fresh``),
  ``layout_level`` int, ``appearance_draw`` int;
- experiences: ``experience_id``, optional ``base_scene_id``, ``recorded_at``, ``own_base_success``;
- embeddings: ``representation``, ``kind`` (``experience`` | ``scene``), ``id``, ``vector``;
- memory records (``memory audit --records``, SPEC §2): ``pair_id``, ``memory`` A|B,
  ``action_seed`` int, ``world`` A|B, ``progress_warranted``, ``progress_other``, ``value`` in
  [0, 1], ``action`` (list of floats), ``present_equal`` bool; optional ``route``, ``stratum``,
  ``plan_hash``;
- policy actions (``fqe fit --policy-actions NAME=FILE``, SPEC §3): ``index`` (global dataset
  frame), ``sample`` (0..M-1), ``action`` (list of floats).
"""

from __future__ import annotations

import csv
import json
import math
import re
import subprocess
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

EXECUTIONS = ("experience_id", "scene_id", "seed", "success")
SCENES = ("scene_id", "perturbation", "layout_level", "appearance_draw")
EXPERIENCES = ("experience_id", "base_scene_id", "recorded_at", "own_base_success")
MEMORY_RECORDS = (
    "pair_id", "memory", "action_seed", "world", "progress_warranted", "progress_other",
    "value", "action", "present_equal", "route", "stratum", "plan_hash",
)
POLICY_ACTIONS = ("index", "sample", "action")
EMBEDDINGS = ("representation", "kind", "id", "vector")
# Columns a writer may leave out entirely (all rows None).
_OPTIONAL = {"base_scene_id", "recorded_at", "own_base_success", "route", "stratum", "plan_hash"}
# List-valued columns: float32 lists in Parquet, JSON arrays in JSONL, space-separated in CSV.
_LISTS = {"action", "vector"}


class InputError(ValueError):
    """A file the CLI's reader refuses: ``message`` is the CLI's (file, row, column), with
    ``file``, ``row`` (1-based data row, or None) and ``column`` (or None) parsed from it."""

    def __init__(self, message: str, file: Path):
        super().__init__(message)
        self.message = message
        self.file = file
        m = re.search(r"\brow (\d+)", message)
        self.row = int(m.group(1)) if m else None
        m = re.search(r'\bcolumn "([^"]+)"', message)
        self.column = m.group(1) if m else None


def _rows(rows: Iterable[Mapping[str, Any] | Sequence[Any]], columns: Sequence[str]) -> list[dict]:
    out = []
    for i, r in enumerate(rows, start=1):
        if isinstance(r, Mapping):
            unknown = set(r) - set(columns)
            if unknown:
                raise ValueError(f"row {i}: unknown column(s) {sorted(unknown)}; columns: {list(columns)}")
            out.append({c: r.get(c) for c in columns})
        else:
            r = list(r)
            if len(r) > len(columns):
                raise ValueError(f"row {i}: {len(r)} values for columns {list(columns)}")
            out.append(dict(zip(columns, r + [None] * (len(columns) - len(r)))))
    return out


def _plain(value: Any) -> Any:
    """numpy scalars and arrays, torch tensors -> Python numbers and lists."""
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        return value.tolist()
    return value


def _csv_cell(column: str, value: Any) -> str:
    if value is None:
        return ""
    if column in _LISTS:
        return " ".join(repr(float(x)) for x in value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return str(value)


def write_table(path: str | Path, rows: list[dict], columns: Sequence[str]) -> Path:
    """Writes ``rows`` (dicts over ``columns``) to ``path`` in the format its extension names;
    columns in ``_OPTIONAL`` that are None in every row are left out. Does not validate."""
    path = Path(path)
    rows = [{k: _plain(v) for k, v in r.items()} for r in rows]
    columns = [c for c in columns if c not in _OPTIONAL or any(r.get(c) is not None for r in rows)]
    suffix = path.suffix.lower()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".partial")
    if suffix == ".csv":
        with open(tmp, "w", newline="", encoding="utf-8") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(columns)
            for r in rows:
                w.writerow([_csv_cell(c, r.get(c)) for c in columns])
    elif suffix in (".jsonl", ".ndjson"):
        with open(tmp, "w", encoding="utf-8") as f:
            for r in rows:
                f.write(json.dumps({c: r.get(c) for c in columns}, allow_nan=True) + "\n")
    elif suffix == ".parquet":
        try:
            import pyarrow as pa
            import pyarrow.parquet as pq
        except ImportError as e:
            raise ImportError("writing .parquet needs pyarrow (or write .csv / .jsonl)") from e
        arrays = {}
        for c in columns:
            values = [r.get(c) for r in rows]
            if c in _LISTS:
                arrays[c] = pa.array(values, type=pa.list_(pa.float32()))
            elif any(isinstance(v, bool) for v in values) and all(
                v is None or isinstance(v, bool) or v in (0, 1) for v in values
            ):
                # 0/1 beside True/False (as CSV and JSONL allow): one Parquet boolean column.
                arrays[c] = pa.array([None if v is None else bool(v) for v in values], type=pa.bool_())
            else:
                arrays[c] = pa.array(values)
        pq.write_table(pa.table(arrays), tmp)
    else:
        raise ValueError(f"{path}: extension must be .csv, .jsonl, .ndjson or .parquet")
    tmp.replace(path)
    return path


def validate(kind: str, path: str | Path, binary: str | None = None) -> str:
    """Runs ``roboaudit validate KIND PATH``; returns its summary line.

    ``kind``: executions, scenes, experiences, embeddings, selections, memory-records,
    policy-actions. ``binary``: a ``roboaudit`` executable to run instead of the wheel's own.
    Raises :class:`InputError` (the CLI's message) when the reader refuses the file (exit 3).
    """
    path = Path(path)
    if binary is not None:
        cmd, env = [binary], None
    else:
        from ._launcher import prepare

        native, env = prepare()
        cmd = [native]
    proc = subprocess.run(
        [*cmd, "validate", kind, str(path)], env=env, capture_output=True, text=True
    )
    if proc.returncode == 3:
        message = proc.stderr.strip()
        message = message[len("error: "):] if message.startswith("error: ") else message
        raise InputError(message, path)
    if proc.returncode != 0:
        raise RuntimeError(f"roboaudit validate {kind} {path} failed ({proc.returncode}): {proc.stderr.strip()}")
    return proc.stdout.strip()


def _write(kind: str, columns: Sequence[str], path, rows, check: bool, binary: str | None) -> Path:
    out = write_table(path, _rows(rows, columns), columns)
    if check:
        validate(kind, out, binary)
    return out


def write_executions(path, rows, *, check: bool = True, binary: str | None = None) -> Path:
    """A retrieval execution log; rows are dicts or ``(experience_id, scene_id, seed, success)``."""
    return _write("executions", EXECUTIONS, path, rows, check, binary)


def write_scenes(path, rows, *, check: bool = True, binary: str | None = None) -> Path:
    """The query scenes; rows are dicts or ``(scene_id, perturbation, layout_level, appearance_draw)``."""
    return _write("scenes", SCENES, path, rows, check, binary)


def write_experiences(path, rows, *, check: bool = True, binary: str | None = None) -> Path:
    """The library, in library order; rows are dicts or
    ``(experience_id, base_scene_id, recorded_at, own_base_success)`` (trailing ones optional)."""
    return _write("experiences", EXPERIENCES, path, rows, check, binary)


def write_embeddings(path, rows, *, check: bool = True, binary: str | None = None) -> Path:
    """Embeddings; rows are dicts or ``(representation, kind, id, vector)``, ``kind`` being
    ``experience`` or ``scene`` and ``vector`` a list of floats (one length per representation)."""
    return _write("embeddings", EMBEDDINGS, path, rows, check, binary)


def write_memory_records(path, rows, *, check: bool = True, binary: str | None = None) -> Path:
    """Counterfactual-memory-audit records, one per (pair, memory, action seed, world)."""
    return _write("memory-records", MEMORY_RECORDS, path, rows, check, binary)


def write_policy_actions(path, rows, *, check: bool = True, binary: str | None = None) -> Path:
    """A policy's actions at dataset frames; rows are dicts or ``(index, sample, action)``."""
    return _write("policy-actions", POLICY_ACTIONS, path, rows, check, binary)
