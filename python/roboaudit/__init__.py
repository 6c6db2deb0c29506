"""roboaudit from Python: read an audit's results, write the audits' input files.

- ``roboaudit.load(DIR)``: a retrieval audit folder, a memory audit folder, an FQE output folder
  or a demo folder, as plain Python objects (``roboaudit.results``), with pandas DataFrames when
  pandas is installed.
- ``roboaudit.writers``: execution logs, memory-audit records and policy-actions files written
  from a Python harness and checked by the CLI's own readers (``roboaudit validate``).

The ``roboaudit`` command itself is the Rust binary, started by ``roboaudit._launcher``. Imports
are lazy so that the command starts without loading this package's modules.
"""

from __future__ import annotations

__all__ = ["load", "writers", "results", "InputError", "__version__"]


def __getattr__(name: str):
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version("roboaudit")
        except PackageNotFoundError:  # a source checkout on sys.path
            return "0+unknown"
    if name == "load":
        from .results import load

        return load
    if name in ("writers", "results"):
        import importlib

        return importlib.import_module(f".{name}", __name__)
    if name == "InputError":
        from .writers import InputError

        return InputError
    raise AttributeError(f"module 'roboaudit' has no attribute {name!r}")
