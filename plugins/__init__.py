"""First-party toolmesh plugins; each subpackage registers on the ``toolmesh.plugins`` entry point."""
