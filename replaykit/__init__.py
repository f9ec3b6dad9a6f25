"""replaykit: record, replay, branch, diff and export AI agent runs."""

__version__ = "0.1.0"
