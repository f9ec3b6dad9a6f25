"""``replaykit view``: a local web viewer for runs (the ``view`` extra: Starlette, uvicorn, Jinja2).

Pages: the runs list (search, filters, lineage, sorting, live refresh), a run's timeline, one step
whole, a side-by-side aligned diff, and branch / play forms. Safety lives in ``security.py``; the
views come from the core. See docs/viewer.md.
"""
