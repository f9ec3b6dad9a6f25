from replaykit.cli.main import entrypoint

entrypoint()
