"""Template of the standalone replay script (see script.py)."""
