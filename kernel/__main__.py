"""``python -m toolmesh`` runs the command line."""

from .cli import main

main()
