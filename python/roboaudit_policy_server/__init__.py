"""Serve a Python policy to roboaudit over openpi's websocket protocol.

Two lines serve your own policy (a callable ``obs -> actions`` or a LeRobot-style object with
``select_action`` and ``reset``)::

    from roboaudit_policy_server import serve
    serve(my_policy, port=8000)          # then: roboaudit fqe actions --policy mine=ws://127.0.0.1:8000 ...

The wire format is openpi's own (``openpi_client.msgpack_numpy``), so roboaudit, openpi's
``WebsocketClientPolicy`` and RoboArena-style clients all talk to it.
"""

from .server import PolicyServer, serve, PLAIN, EXTENSION_VERSION

__all__ = ["PolicyServer", "serve", "PLAIN", "EXTENSION_VERSION"]
