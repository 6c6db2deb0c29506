"""The server: openpi's protocol plus roboaudit's declared extensions.

Protocol (openpi's ``WebsocketPolicyServer``): on connect, one binary msgpack frame with the
metadata dict; then per message one msgpack map in (an observation), one map out with
``actions`` (``(action_horizon, action_dim)`` float array) and ``server_timing.infer_ms``; on an
exception, the traceback as a text frame, then close code 1011.

Extensions (declared in the metadata as ``{"roboaudit": {"version": 1, "capabilities": [...]}}``,
each only when the policy supports it):

- ``reset``: ``{"roboaudit/command": "reset"}`` calls ``policy.reset()``.
- ``action_seed``: ``roboaudit/action_seed`` (int) in an observation is passed to the seed
  function (``seed_fn``, or ``policy.seed``) before the policy acts; the key is removed from the
  observation the policy sees.
- ``memory_get`` / ``memory_set``: ``policy.get_memory() -> {name: float32 array}`` and
  ``policy.set_memory({name: array})``; a ``policy.protected_memory`` list of component names is
  declared as ``roboaudit.protected`` (components later observations never overwrite, such as
  Mem-0's anchor). ``roboaudit memory intervene`` needs both commands.
"""

from __future__ import annotations

import logging
import threading
import time
import traceback
from typing import Any, Callable

import numpy as np
import websockets.frames
import websockets.sync.server
from openpi_client import msgpack_numpy

EXTENSION_VERSION = 1
COMMAND = "roboaudit/command"
MEMORY = "roboaudit/memory"
SEED = "roboaudit/action_seed"
PLAIN = "plain"

log = logging.getLogger("roboaudit_policy_server")


def _actions_of(out: Any) -> np.ndarray:
    """The policy's answer as an actions array: a dict with ``actions``, or an array."""
    if isinstance(out, dict):
        out = out["actions"]
    if hasattr(out, "detach"):  # a torch tensor
        out = out.detach().cpu().numpy()
    a = np.asarray(out)
    if a.ndim == 1:
        a = a[None, :]
    return a


class PolicyServer:
    """Serves ``policy`` at ``ws://host:port``.

    ``policy`` is a callable ``obs -> actions`` or an object with ``select_action(obs)`` (LeRobot)
    or ``infer(obs)`` (openpi), optionally ``reset()``, ``seed(int)``, ``get_memory()`` and
    ``set_memory(dict)``. ``extensions=PLAIN`` serves as a plain openpi server (no roboaudit
    metadata). ``metadata`` is merged into the metadata sent on connect (e.g. ``action_horizon``,
    ``observation_keys``).
    """

    def __init__(
        self,
        policy: Any,
        host: str = "127.0.0.1",
        port: int = 8000,
        metadata: dict | None = None,
        seed_fn: Callable[[int], None] | None = None,
        extensions: str | None = None,
    ) -> None:
        self.policy = policy
        self.host = host
        self.port = port
        self.seed_fn = seed_fn or getattr(policy, "seed", None)
        self.lock = threading.Lock()
        caps = []
        if callable(getattr(policy, "reset", None)):
            caps.append("reset")
        if self.seed_fn is not None:
            caps.append("action_seed")
        if callable(getattr(policy, "get_memory", None)):
            caps.append("memory_get")
        if callable(getattr(policy, "set_memory", None)):
            caps.append("memory_set")
        self.capabilities = [] if extensions == PLAIN else caps
        self.metadata = dict(metadata or {})
        if extensions != PLAIN:
            self.metadata["roboaudit"] = {"version": EXTENSION_VERSION, "capabilities": caps}
            protected = getattr(policy, "protected_memory", None)
            if protected:
                self.metadata["roboaudit"]["protected"] = [str(n) for n in protected]
        self._server: websockets.sync.server.Server | None = None

    # -- policy calls -------------------------------------------------------------------------
    def _act(self, obs: dict) -> dict:
        seed = obs.pop(SEED, None)
        if seed is not None and "action_seed" in self.capabilities:
            self.seed_fn(int(seed))
        p = self.policy
        if hasattr(p, "select_action"):
            out = p.select_action(obs)
        elif hasattr(p, "infer"):
            out = p.infer(obs)
        else:
            out = p(obs)
        return {"actions": _actions_of(out)}

    def _command(self, msg: dict) -> dict:
        name = msg[COMMAND]
        if name not in self.capabilities:
            raise ValueError(f"unsupported roboaudit command {name!r}; declared: {self.capabilities}")
        if name == "reset":
            self.policy.reset()
            return {"ok": True}
        if name == "memory_get":
            mem = self.policy.get_memory()
            return {MEMORY: {k: np.asarray(v, dtype=np.float32).reshape(-1) for k, v in mem.items()}}
        if name == "memory_set":
            self.policy.set_memory({k: np.array(v, dtype=np.float32) for k, v in msg[MEMORY].items()})
            return {"ok": True}
        raise ValueError(f"unknown command {name!r}")

    def handle(self, msg: dict) -> dict:
        """One request → one answer (exceptions propagate to the connection handler)."""
        with self.lock:
            if COMMAND in msg and self.capabilities:
                return self._command(msg)
            start = time.monotonic()
            out = self._act(msg)
            out["server_timing"] = {"infer_ms": (time.monotonic() - start) * 1000.0}
            return out

    # -- websocket ----------------------------------------------------------------------------
    def _handler(self, ws: websockets.sync.server.ServerConnection) -> None:
        packer = msgpack_numpy.Packer()
        ws.send(packer.pack(self.metadata))
        while True:
            try:
                msg = msgpack_numpy.unpackb(ws.recv())
                ws.send(packer.pack(self.handle(msg)))
            except websockets.ConnectionClosed:
                return
            except Exception:
                ws.send(traceback.format_exc())
                ws.close(
                    code=websockets.frames.CloseCode.INTERNAL_ERROR,
                    reason="Internal server error. Traceback included in previous frame.",
                )
                log.exception("policy failed")
                return

    def start(self) -> "PolicyServer":
        """Starts serving on a background thread (``port=0`` picks a free port)."""
        self._server = websockets.sync.server.serve(
            self._handler, self.host, self.port, compression=None, max_size=None
        )
        self.port = self._server.socket.getsockname()[1]
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server = None

    @property
    def url(self) -> str:
        return f"ws://{self.host}:{self.port}"

    def serve_forever(self) -> None:
        """Serves in the foreground until interrupted."""
        with websockets.sync.server.serve(
            self._handler, self.host, self.port, compression=None, max_size=None
        ) as server:
            self._server = server
            server.serve_forever()


def serve(policy: Any, host: str = "127.0.0.1", port: int = 8000, **kwargs: Any) -> None:
    """Serves ``policy`` in the foreground (see :class:`PolicyServer`)."""
    PolicyServer(policy, host=host, port=port, **kwargs).serve_forever()
