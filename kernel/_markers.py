"""The pluggy markers of toolmesh.

Write a plugin as a module of hook functions and register it with an entry
point in your ``pyproject.toml``::

    [project.entry-points."toolmesh.plugins"]
    shout = "toolmesh_shout"

    # toolmesh_shout.py
    from toolmesh import hookimpl

    @hookimpl
    def toolmesh_tool_spec(spec):
        return msgspec.structs.replace(spec, description=spec.description.upper())
"""

import pluggy

__all__ = ["hookimpl", "hookspec"]

hookimpl = pluggy.HookimplMarker("toolmesh")
"""Marks a function as the implementation of the toolmesh hook of the same name."""

hookspec = pluggy.HookspecMarker("toolmesh")
"""Marks a hook specification (only ``toolmesh.hookspecs`` uses it)."""
