"""Allows `python -m petrel ...` as an alternative to the ./petrel script."""
from petrel.cli import main

raise SystemExit(main())
