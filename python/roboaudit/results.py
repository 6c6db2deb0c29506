"""``roboaudit.load(DIR)``: an audit's results as plain Python objects, and DataFrames with pandas.

A folder is recognised the way ``roboaudit report`` recognises it (crates/roboaudit-report,
``detect.rs``), by the ``schema`` tag of the JSON the Rust crates write:

- ``audit.json`` with ``roboaudit.retrieval.v1`` (``retrieval audit --out``):
  :class:`RetrievalAudit`, fields of ``roboaudit_retrieval::AuditReport``;
- ``audit.json`` with ``roboaudit.memory.v1`` (``memory audit`` / ``memory collect --out``):
  :class:`MemoryAudit`, fields of ``roboaudit_memory::MemoryAudit``;
- ``fqe.json`` with ``roboaudit.fqe.v1`` (``fqe fit --out``): :class:`FqeResult`, fields of
  ``roboaudit_fqe::FqeReport``;
- ``audit.json`` with ``roboaudit.demo.v1`` (``roboaudit demo``): :class:`Demo`, the demo's
  headline numbers plus every audit its ``report.sources`` lists, each loaded as above;
- ``natural.json`` with ``roboaudit.memory.natural.v1`` (``memory natural --out``):
  :class:`NaturalStudy`, fields of ``roboaudit_memory::natural::NaturalStudy``; beside a memory
  audit's ``audit.json`` it is also :attr:`MemoryAudit.natural`.

Every object keeps the whole parsed JSON in ``data`` (nothing is dropped; undefined values are
``None`` with a sibling ``*_reason`` string, as the Rust writes them). ``tables()`` gives the
per-row parts as lists of flat dicts (nested objects flattened with ``.``), ``frames()`` the same
as pandas DataFrames; pandas is optional (``pip install 'roboaudit[pandas]'``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Union

RETRIEVAL_SCHEMA = "roboaudit.retrieval.v1"
MEMORY_SCHEMA = "roboaudit.memory.v1"
FQE_SCHEMA = "roboaudit.fqe.v1"
DEMO_SCHEMA = "roboaudit.demo.v1"
NATURAL_SCHEMA = "roboaudit.memory.natural.v1"

Row = dict[str, Any]


class LoadError(ValueError):
    """A folder that holds no roboaudit result, or a result file that cannot be read."""


def flatten(obj: dict[str, Any], prefix: str = "") -> Row:
    """One flat row from nested dicts (``{"a": {"b": 1}}`` -> ``{"a.b": 1}``); lists stay values."""
    row: Row = {}
    for key, value in obj.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            row.update(flatten(value, name + "."))
        else:
            row[name] = value
    return row


def _frames(tables: dict[str, list[Row]]):
    try:
        import pandas as pd
    except ImportError as e:  # pandas is optional
        raise ImportError(
            "frames() needs pandas: pip install 'roboaudit[pandas]' (tables() gives the same rows)"
        ) from e
    return {name: pd.DataFrame(rows) for name, rows in tables.items()}


@dataclass
class _Result:
    path: Path
    """The folder loaded."""
    file: Path
    """The JSON file read."""
    data: dict[str, Any] = field(repr=False)
    """The whole parsed JSON."""

    @property
    def schema(self) -> str:
        """The file's schema tag, such as ``roboaudit.retrieval.v1``."""
        return self.data["schema"]

    def tables(self) -> dict[str, list[Row]]:
        """Named tables as lists of flat row dicts."""
        raise NotImplementedError

    def frames(self):
        """``tables()`` as pandas DataFrames (ImportError without pandas)."""
        return _frames(self.tables())


@dataclass
class RetrievalAudit(_Result):
    """A retrieval audit (SPEC §1), ``roboaudit_retrieval::AuditReport``."""

    @property
    def n_scenes(self) -> int:
        """Query scenes n."""
        return self.data["n_scenes"]

    @property
    def n_experiences(self) -> int:
        """Library size K."""
        return self.data["n_experiences"]

    @property
    def reference(self) -> dict[str, Any]:
        """Random, oracle and best-fixed on all query scenes (success rates in [0, 1])."""
        return self.data["reference"]

    @property
    def run(self) -> Optional[dict[str, Any]]:
        """What was audited, when ``retrieval audit --run`` read a finished ``retrieval collect``
        folder: ``task``, ``mechanism`` (``replay``, ``policy``, ``policy-dr``) and
        ``appearance_caused_failures`` (``executions``, ``failed``, ``experiences``,
        ``own_base``); None otherwise."""
        return self.data.get("run")

    @property
    def rules(self) -> list[dict[str, Any]]:
        """Every rule that ran: ``name``, ``success``, ``advantage``, ``gap``, AUROCs, ..."""
        return self.data["rules"]

    def rule(self, name: str) -> dict[str, Any]:
        """The rule called ``name`` (KeyError listing the names when there is none)."""
        for r in self.rules:
            if r["name"] == name:
                return r
        raise KeyError(f"no rule {name!r}; rules: {', '.join(r['name'] for r in self.rules)}")

    def tables(self) -> dict[str, list[Row]]:
        """``rules`` (one row per rule; per-experience selections dropped), ``experiences``
        (quality and own-base success), ``skipped_rules`` and ``library_interventions``."""
        rules = []
        for r in self.rules:
            r = {k: v for k, v in r.items() if k not in ("selection", "choices")}
            rules.append(flatten(r))
        return {
            "rules": rules,
            "experiences": [flatten(e) for e in self.data["experiences"]],
            "skipped_rules": [flatten(s) for s in self.data["skipped_rules"]],
            "library_interventions": [flatten(i) for i in self.data["library_interventions"]],
        }


@dataclass
class MemoryAudit(_Result):
    """A counterfactual memory audit (SPEC §2), ``roboaudit_memory::MemoryAudit``."""

    @property
    def faithfulness(self) -> dict[str, Any]:
        """Signed faithfulness F: ``value`` in [-1, 1] or None, ``ci`` ``[lo, hi]``, ``reason``."""
        return self.data["faithfulness"]

    @property
    def sensitivity(self) -> float | None:
        """S: mean L2 distance between the actions under the two histories (action units, >= 0;
        None when undefined)."""
        return self.data["sensitivity"]

    @property
    def n_pairs(self) -> int:
        """Pairs audited."""
        return self.data["n_pairs"]

    @property
    def natural(self) -> NaturalStudy | None:
        """The natural-occurrence study written into the same folder (``natural.json``), or
        None. An observational cohort of its own: never pooled with the audit's pairs."""
        file = self.path / "natural.json"
        return load(file) if file.is_file() else None  # type: ignore[return-value]

    def tables(self) -> dict[str, list[Row]]:
        """``pairs`` (one row per pair), ``by_route`` and ``excluded``."""
        return {
            "pairs": [flatten(p) for p in self.data["pairs"]],
            "by_route": [flatten(r) for r in self.data["by_route"]],
            "excluded": [flatten(e) for e in self.data["excluded"]],
        }


@dataclass
class NaturalStudy(_Result):
    """Natural occurrence (docs/methods.md §2.10), ``roboaudit_memory::natural::NaturalStudy``:
    untreated native episodes, observational."""

    @property
    def decision_fraction(self) -> tuple[int, int]:
        """Episodes containing the audited decision type, and episodes: ``(count, n)``."""
        d = self.data["analysis"]["decision"]
        return d["count"], d["n"]

    @property
    def remaining_steps(self) -> dict[str, Any]:
        """The primary contrast, warranted-first minus other-first mean remaining steps:
        ``estimate`` (steps) or None, ``ci``, ``verdict``, ``undefined_reason``."""
        return self.data["analysis"]["remaining_steps"]

    @property
    def success_association(self) -> dict[str, Any]:
        """The secondary, non-causal success-rate difference (same fields)."""
        return self.data["analysis"]["success_association"]

    def tables(self) -> dict[str, list[Row]]:
        """``episodes``: one row per natural episode (candidates joined with ``,``)."""
        rows = []
        for e in self.data["episodes"]:
            row = dict(e)
            row["candidates"] = ",".join(map(str, e["candidates"]))
            rows.append(row)
        return {"episodes": rows}


@dataclass
class FqeResult(_Result):
    """Fitted Q evaluation (SPEC §3), ``roboaudit_fqe::FqeReport``."""

    @property
    def policies(self) -> list[dict[str, Any]]:
        """One entry per target policy, with per-task estimates and (when known) ground truth."""
        return self.data["policies"]

    @property
    def metrics(self) -> list[dict[str, Any]]:
        """Suite and per-task metrics per estimator (ARE, Pearson, Spearman, regret@1, MMRV)."""
        return self.data["metrics"]

    def tables(self) -> dict[str, list[Row]]:
        """``estimates``: one row per (policy, task) with the neural, linear and naive estimates,
        the ground truth and ARE; ``metrics``: one row per estimator (suite-level)."""
        estimates = []
        for p in self.policies:
            for t in p["tasks"]:
                row = {"policy": p["policy"]}
                row.update(flatten(t))
                row.pop("neural.seeds", None)
                estimates.append(row)
        metrics = [{"estimator": m["estimator"], **flatten(m["suite"])} for m in self.metrics]
        return {"estimates": estimates, "metrics": metrics}


@dataclass
class Demo(_Result):
    """A ``roboaudit demo`` folder: the headline ``audit.json`` and every audit it ran."""

    parts: list[Union[RetrievalAudit, MemoryAudit, FqeResult]] = field(default_factory=list)
    """The audits of ``report.sources`` (retrieval per task, memory per policy, FQE), loaded."""

    @property
    def retrieval(self) -> list[RetrievalAudit]:
        """The retrieval audits, one per task and reuse mechanism (from ``tasks`` in the headline
        file: Stack and Door under Replay, then Stack under Policy and Policy+DR)."""
        return [
            RetrievalAudit(self.path, self.file, t["audit"]) for t in self.data.get("tasks", [])
        ]

    def tables(self) -> dict[str, list[Row]]:
        """``retrieval_rules`` (every task's rules, with ``task`` and ``mechanism`` columns),
        ``memory`` (the headline per policy) and the tables of each part, prefixed by its folder
        name."""
        out: dict[str, list[Row]] = {"retrieval_rules": [], "memory": []}
        for t in self.data.get("tasks", []):
            for r in RetrievalAudit(self.path, self.file, t["audit"]).tables()["rules"]:
                # Files written before the learned mechanisms hold Replay only and omit it.
                mechanism = t.get("mechanism", "replay")
                out["retrieval_rules"].append({"task": t["task"], "mechanism": mechanism, **r})
        out["memory"] = [flatten(m) for m in self.data.get("memory", [])]
        for part in self.parts:
            if isinstance(part, RetrievalAudit):
                continue  # already in retrieval_rules
            inside = part.path.is_relative_to(self.path)
            name = part.path.relative_to(self.path).as_posix() if inside else part.path.name
            for table, rows in part.tables().items():
                out[f"{name}/{table}"] = rows
        return out


AnyResult = Union[RetrievalAudit, MemoryAudit, FqeResult, Demo, NaturalStudy]


def _read(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise LoadError(f"{path}: {e}") from e
    if not isinstance(data, dict) or not isinstance(data.get("schema"), str):
        raise LoadError(f"{path}: no `schema` tag: not a roboaudit result")
    return data


def load(path: str | Path) -> AnyResult:
    """Loads the roboaudit result in folder ``path`` (or the ``audit.json``/``fqe.json`` itself).

    Returns a :class:`RetrievalAudit`, :class:`MemoryAudit`, :class:`FqeResult`, :class:`Demo` or
    :class:`NaturalStudy` (a folder's ``audit.json`` first, then ``fqe.json``, then
    ``natural.json``).
    Raises :class:`LoadError` for a folder with no result, a file that does not parse, or an
    unknown schema.
    """
    path = Path(path)
    if path.is_file():
        folder, candidates = path.parent, [path]
    elif path.is_dir():
        folder, candidates = path, [path / "audit.json", path / "fqe.json", path / "natural.json"]
    else:
        raise LoadError(f"{path}: no such file or folder")
    for file in candidates:
        if not file.is_file():
            continue
        data = _read(file)
        schema = data["schema"]
        if schema == RETRIEVAL_SCHEMA:
            return RetrievalAudit(folder, file, data)
        if schema == MEMORY_SCHEMA:
            return MemoryAudit(folder, file, data)
        if schema == FQE_SCHEMA:
            return FqeResult(folder, file, data)
        if schema == NATURAL_SCHEMA:
            return NaturalStudy(folder, file, data)
        if schema == DEMO_SCHEMA:
            sources = (data.get("report") or {}).get("sources", [])
            parts: list[Union[RetrievalAudit, MemoryAudit, FqeResult]] = []
            for source in sources:
                part = load(folder / source)
                # The demo's retrieval/ folder is itself a demo file holding one audit per task.
                parts.extend([*part.retrieval, *part.parts] if isinstance(part, Demo) else [part])
            return Demo(folder, file, data, parts)
        raise LoadError(
            f"{file}: schema {schema!r} is not one load() reads "
            f"({RETRIEVAL_SCHEMA}, {MEMORY_SCHEMA}, {FQE_SCHEMA}, {DEMO_SCHEMA}, {NATURAL_SCHEMA})"
        )
    raise LoadError(f"{path}: no audit.json, fqe.json or natural.json: not a roboaudit result folder")
