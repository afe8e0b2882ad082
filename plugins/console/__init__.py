"""``toolmesh console``: the mesh in a web page — catalog, tool forms, live calls, nodes, call detail.

A plain client of the public API: it reads the catalog, follows ``tool.event.*``
and calls tools through NATS like any other client. Its command comes through
the ``toolmesh.cli`` entry point group::

    [project.entry-points."toolmesh.cli"]
    console = "toolmesh.plugins.console.cli:console_app"

It needs the ``console`` extra (``pip install 'toolmesh[console]'``); see docs/console.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolmesh import lazy_exports

if TYPE_CHECKING:  # the names below load on first use (PEP 562): `toolmesh --help` imports this package
    from .app import create_app
    from .server import serve_console

__all__ = ["create_app", "serve_console"]

__getattr__, __dir__ = lazy_exports(__name__, {"create_app": "app", "serve_console": "server"})
