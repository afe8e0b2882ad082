"""``python -m toolmesh`` runs the command line."""

from toolmesh._cli.commands import main

main()
