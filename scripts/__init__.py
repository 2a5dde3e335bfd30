"""Scripts that keep the repository's documents true: run as `python -m scripts.<name>`
from the repository's root (the Makefile's targets do)."""
