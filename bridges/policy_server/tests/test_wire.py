"""Wire compatibility with openpi's own client, and the extensions."""

import numpy as np
import pytest
import websockets.sync.client
from openpi_client import msgpack_numpy
from openpi_client.websocket_client_policy import WebsocketClientPolicy

from roboaudit_policy_server import PLAIN
from roboaudit_policy_server.examples import Faulty, StatePolicy, StochasticPolicy, state_action


def obs(seed=0):
    r = np.random.default_rng(seed)
    return {
        "observation/state": r.normal(size=15).astype(np.float32),
        "observation/image": r.integers(0, 256, size=(8, 8, 3), dtype=np.uint8),
        "prompt": "push the red block right",
    }


def test_openpi_client_gets_actions_and_metadata(serve):
    s = serve(StatePolicy(7), metadata={"action_horizon": 4})
    c = WebsocketClientPolicy(s.url)
    meta = c.get_server_metadata()
    assert meta["action_horizon"] == 4
    assert meta["roboaudit"] == {"version": 1, "capabilities": []}
    o = obs()
    out = c.infer(o)
    assert out["actions"].shape == (4, 7) and out["actions"].dtype == np.float32
    np.testing.assert_array_equal(out["actions"][0], state_action(o, 7))
    assert out["server_timing"]["infer_ms"] >= 0


def test_plain_server_sends_no_extension_metadata(serve):
    s = serve(StochasticPolicy(7), extensions=PLAIN)
    assert WebsocketClientPolicy(s.url).get_server_metadata() == {}


def test_capabilities_follow_the_policy(serve):
    s = serve(StochasticPolicy(3))
    caps = WebsocketClientPolicy(s.url).get_server_metadata()["roboaudit"]["capabilities"]
    assert caps == ["reset", "action_seed"]


class AnchorMemory(StochasticPolicy):
    """A policy with a named memory and a protected anchor."""

    protected_memory = ["anchor"]

    def get_memory(self):
        return {"anchor": np.zeros(4, np.float32), "window": np.ones(2, np.float32)}

    def set_memory(self, memory):
        pass


def test_memory_capabilities_and_protected_components_are_declared(serve):
    ext = WebsocketClientPolicy(serve(AnchorMemory(3)).url).get_server_metadata()["roboaudit"]
    assert ext["capabilities"] == ["reset", "action_seed", "memory_get", "memory_set"]
    assert ext["protected"] == ["anchor"]


def test_server_error_is_text_then_close_1011(serve):
    s = serve(Faulty(7, "raise"))
    c = WebsocketClientPolicy(s.url)
    with pytest.raises(RuntimeError, match="policy failed on purpose"):
        c.infer(obs())
    with pytest.raises(websockets.ConnectionClosed) as e:
        c._ws.recv()
    assert e.value.rcvd.code == 1011


def raw_query(ws, msg):
    ws.send(msgpack_numpy.packb(msg))
    return msgpack_numpy.unpackb(ws.recv())


def test_action_seed_gives_common_randomness_and_reset_clears_history(serve):
    s = serve(StochasticPolicy(3))
    with websockets.sync.client.connect(s.url, compression=None, max_size=None) as ws:
        ws.recv()
        o = obs()
        a1 = raw_query(ws, {**o, "roboaudit/action_seed": 11})["actions"]
        raw_query(ws, {"roboaudit/command": "reset"})
        a2 = raw_query(ws, {**o, "roboaudit/action_seed": 11})["actions"]
        a3 = raw_query(ws, {**o, "roboaudit/action_seed": 12})["actions"]
    np.testing.assert_array_equal(a1, a2)
    assert not np.array_equal(a1, a3)


def test_marker_keys_are_bytes_on_the_wire():
    packed = msgpack_numpy.packb({"a": np.zeros(2, np.float32)})
    # fixmap(1), fixstr "a", fixmap(4), bin8 len 11 "__ndarray__"
    assert packed[:6] == b"\x81\xa1a\x84\xc4\x0b"
