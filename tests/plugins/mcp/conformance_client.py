"""The client side of the MCP conformance suite: ``python conformance_client.py URL``.

Connects toolmesh's MCP client (the ``mcp`` plugin in a kernel) to the
suite's server, lists its tools and calls each once with sample arguments.
"""

from __future__ import annotations

import sys
from typing import Any

import anyio
import toolmesh.plugins.mcp as mcp_plugin
from toolmesh import Kernel, Settings
from toolmesh.contracts import ToolRequest

SAMPLES = {"number": 2, "integer": 3, "string": "text", "boolean": True}


def sample_arguments(schema: dict[str, Any]) -> dict[str, Any]:
    """A value of the right type for every required property."""
    properties = schema.get("properties", {})
    return {
        name: SAMPLES.get(properties.get(name, {}).get("type"), None) for name in schema.get("required", [])
    }


async def main(url: str) -> int:
    settings = Settings(plugins={"mcp": {"servers": {"conformance": {"url": url, "mode": "on-demand"}}}})
    async with Kernel([mcp_plugin], settings=settings, load_entrypoints=False) as kernel:
        failures = 0
        for spec in kernel.tools:
            result = await kernel.call(
                ToolRequest(
                    id=spec.name, tool=spec.name, arguments=sample_arguments(spec.input_schema), timeout=20
                )
            )
            print(f"{spec.name}: {'error' if result.is_error else 'ok'} {result.text}", file=sys.stderr)
            failures += result.is_error
        return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(anyio.run(main, sys.argv[-1]))
