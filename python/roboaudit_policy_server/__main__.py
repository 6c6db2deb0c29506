"""``python -m roboaudit_policy_server``: serve one of the example policies (tests, benchmarks).

Writes the bound port to ``--port-file`` once listening (``--port 0`` picks a free one).
"""

from __future__ import annotations

import argparse
import logging
import os
import tempfile

from . import examples
from .server import PLAIN, PolicyServer


def build(args: argparse.Namespace):
    kind = args.policy
    if kind == "state":
        return examples.StatePolicy(args.action_dim, args.horizon)
    if kind == "stochastic":
        return examples.StochasticPolicy(args.action_dim, args.horizon)
    if kind in ("faithful", "blind"):
        from . import calibrators

        return calibrators.Calibrator(kind, args.horizon)
    if kind.startswith("faulty-"):
        return examples.Faulty(args.action_dim, kind.removeprefix("faulty-"), args.after, args.horizon)
    raise SystemExit(f"unknown policy {kind!r}")


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="roboaudit-policy-server", description=__doc__)
    p.add_argument("--policy", required=True,
                   help="state | stochastic | faithful | blind | faulty-{nan,wide,raise,hang,exit}")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--port-file", help="write the bound port here once listening")
    p.add_argument("--action-dim", type=int, default=7)
    p.add_argument("--horizon", type=int, default=4)
    p.add_argument("--after", type=int, default=0, help="faulty policies: queries answered well first")
    p.add_argument("--plain", action="store_true", help="no roboaudit extensions (a plain openpi server)")
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    server = PolicyServer(build(args), host=args.host, port=args.port,
                          metadata={"action_horizon": args.horizon},
                          extensions=PLAIN if args.plain else None)
    server.start()
    if args.port_file:
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(args.port_file)))
        with os.fdopen(fd, "w") as f:
            f.write(str(server.port))
        os.replace(tmp, args.port_file)
    try:
        import threading
        threading.Event().wait()
    except KeyboardInterrupt:
        server.stop()


if __name__ == "__main__":
    main()
