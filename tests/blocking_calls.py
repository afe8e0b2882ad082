"""Fail a test when toolmesh code makes a blocking call (file, socket, sleep, lock) on the event loop.

blockbuster wraps the blocking functions of the standard library; a wrapped call made while an event loop runs
in this thread, from a frame of toolmesh (kernel, contracts, plugins), raises ``BlockingError``. The node
swallows and logs some exceptions (a plugin's hook, a background task), so every logged ``BlockingError``
fails the test too.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator

import toolmesh
import toolmesh.contracts
import toolmesh.plugins
from blockbuster import BlockBuster, BlockingError, blockbuster_ctx

# Blocking calls allowed on the loop, each narrowly (file suffix, function names) and for a reason. A frame
# name is matched at the end of the file's path: `kernel/...` in this tree, `toolmesh/...` when installed.
ALLOWED: list[tuple[str, set[str]]] = [
    # Importing a module reads its files, once per process; plugins and tool sources are imported when used.
    ("<frozen importlib._bootstrap>", {"_find_and_load"}),
    # A log line is a short write to stderr or a file; the standard library has no non-blocking handler.
    ("logging/__init__.py", {"emit", "flush"}),
    # `toolmesh`'s lazy public names import their module or read the installed version, once per process.
    ("toolmesh/__init__.py", {"__getattr__"}),
    ("kernel/__init__.py", {"__getattr__"}),
    ("_version.py", {"package_version"}),
]

# Start-up, before the node serves anything: the plugin manager reads the installed entry points; the node
# reads its NATS credentials, TLS files and the embedded broker's state; plugins read the tool sources they
# were given and find the Deno binary. Mesh.connect reads the credential files its settings name.
STARTUP: list[tuple[str, set[str]]] = [
    ("_pipeline/plugin_manager.py", {"create_plugin_manager"}),
    ("_transport/node.py", {"_connect"}),
    ("broker_state.py", {"local_credentials"}),
    ("nats_auth.py", {"connect_options"}),
    # nats-py reads an nkey seed or creds file when it connects and when it signs the server's nonce
    ("nats/aio/client.py", {"_setup_nkeys_connect", "sig_cb"}),
    ("plugins/python/loader.py", {"entry_point_tools", "tools_from", "_import_file", "_from_string"}),
    ("plugins/rune/loader.py", {"claims"}),
    ("plugins/sandbox/document.py", {"find_documents", "load_sources"}),
    ("plugins/sandbox/worker.py", {"find_deno"}),
    # a crew read-file tool resolves its root folder once, when the tool is made (its calls run in a thread)
    ("plugins/crew/agent_tools.py", {"read_file_tool"}),
]

# Known blocking calls while the node serves: small, and left as they are for now.
KNOWN: list[tuple[str, set[str]]] = [
    # The embedded broker is forked from the loop's own thread on purpose (its parent-death signal follows
    # the forking thread), then polled for readiness: a small ports file and a loopback connect.
    ("broker.py", {"launch"}),
    # A Rune reload re-reads the changed files; a sandbox worker reads its isolate's source when it starts.
    ("plugins/rune/reload.py", {"discover"}),
    ("plugins/sandbox/worker.py", {"_isolate_source"}),
]

# The tests' own harness: a nats-server with a test's configuration, started and stopped by the test itself.
HARNESS: list[tuple[str, set[str]]] = [
    ("tests/nats_servers.py", {"start", "stop"}),
]


class BlockingCallsLogged(logging.Handler):
    """Remembers every log record that carries a ``BlockingError``."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        exc = record.exc_info[1] if record.exc_info else None
        if isinstance(exc, BlockingError):
            self.found.append(f"{record.name}: {record.getMessage()}: {exc}")


def allow(buster: BlockBuster, places: list[tuple[str, set[str]]]) -> None:
    """Let every wrapped function block inside the functions named in ``places``."""
    for function in buster.functions.values():
        for filename, names in places:
            function.can_block_in(filename, names)


def watching_the_loop() -> Iterator[BlockBuster]:
    """Activate blockbuster for calls made from toolmesh's own code (a test's own frames are not scanned)."""
    handler = BlockingCallsLogged()
    logging.getLogger().addHandler(handler)
    try:
        with blockbuster_ctx(
            [toolmesh, toolmesh.contracts, toolmesh.plugins], excluded_modules=["toolmesh.testing"]
        ) as buster:
            allow(buster, ALLOWED + STARTUP + KNOWN + HARNESS)
            yield buster
    finally:
        logging.getLogger().removeHandler(handler)
    assert not handler.found, f"blocking calls on the event loop: {handler.found}"
