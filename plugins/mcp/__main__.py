"""``python -m toolmesh.plugins.mcp``: the ``toolmesh mcp`` commands without the entry point installed."""

from .cli import mcp_app

mcp_app(prog_name="toolmesh mcp")
