"""Fixtures of the sandbox tests: documents written to a temporary folder, kernels with the plugin."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
import toolmesh
from toolmesh.plugins import sandbox

ToolWriter = Callable[..., Path]


def document(name: str, source: str, *, language: str = "javascript", **context: Any) -> dict[str, Any]:
    """A conforming tool.code.v1 document; ``context`` entries override the defaults."""
    body: dict[str, Any] = {
        "name": name,
        "description": f"test tool {name}",
        "version": "1.0.0",
        "code": {"language": language, "source": source},
        "input_schema": {"type": "object"},
        "limits": {"memory_mb": 64, "timeout_ms": 3000, "cpu_percent": 100},
    }
    body.update(context)
    return {
        "schema_name": "tool.code.v1",
        "title": f"{name} tool",
        "tags": ["tool", f"tool:{name}", "workspace:tools", "self-contained"],
        "context": body,
    }


@pytest.fixture
def tool_dir(tmp_path: Path) -> Path:
    """An empty folder for ``*.tool.json`` documents."""
    folder = tmp_path / "tools"
    folder.mkdir()
    return folder


@pytest.fixture
def write_tool(tool_dir: Path) -> ToolWriter:
    """``write_tool(name, source, language=..., **context)`` writes ``<name>.tool.json`` and returns its path."""

    def write(name: str, source: str, **options: Any) -> Path:
        path = tool_dir / f"{name}.tool.json"
        path.write_text(json.dumps(document(name, source, **options)), encoding="utf-8")
        return path

    return write


@asynccontextmanager
async def sandbox_kernel(sources: list[str], **sandbox_settings: Any) -> AsyncIterator[toolmesh.Kernel]:
    """A started in-process kernel with only the sandbox plugin (small pool), stopped afterwards."""
    settings = toolmesh.Settings(plugins={"sandbox": {"workers": 1, "max_idle": 1, **sandbox_settings}})
    kernel = toolmesh.Kernel([sandbox], settings=settings, load_entrypoints=False)
    try:
        await kernel.start(sources)
        yield kernel
    finally:
        await kernel.stop()


@pytest.fixture
def kernel_for() -> Callable[..., Any]:
    """``async with kernel_for([paths], **sandbox_settings) as kernel``."""
    return sandbox_kernel


@pytest.fixture
async def http_port() -> AsyncIterator[int]:
    """A tiny HTTP server on loopback answering 200 'pong'."""

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 4\r\nconnection: close\r\n\r\npong")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(answer, "127.0.0.1", 0)
    yield server.sockets[0].getsockname()[1]
    server.close()
    await server.wait_closed()
