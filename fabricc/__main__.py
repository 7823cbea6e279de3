"""`python -m fabricc` runs the command-line interface."""

from fabricc.cli import main

main()
