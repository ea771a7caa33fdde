"""``python -m deeploy_core`` runs the command line."""

from deeploy_core.cli import main

main()
