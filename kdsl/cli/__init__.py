"""Command-line tools (``python -m kdsl <command>``)."""
