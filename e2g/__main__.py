"""`python -m e2g` runs the CLI."""

from e2g.cli.app import main

main()
