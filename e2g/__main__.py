"""`python -m e2g` runs the CLI."""

from e2g.cli.app import main

# Guarded: a fork server's child imports this module again (as __mp_main__).
if __name__ == "__main__":
    main()
