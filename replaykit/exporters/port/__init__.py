"""Ports: ``replaykit export RUN... --format pydantic-ai|langgraph -o DIR`` writes the agent a team would
write by hand in that framework, with its recordings as a conformance suite.

Framework-neutral core: ``spec`` (the agent read from runs), ``prompt`` (the system prompt template),
``signatures`` (JSON Schema -> typed Python), ``source`` (safe literals, identifiers, compile checks),
``tools_module`` (``agent_tools.py``, the Hermes binding), ``writer`` (the project), ``conformance`` (the
suite's driver). A framework plugs in with a module exposing ``render_agent(spec, signatures) -> files``
and ``drive_turn(driver, module, case, history) -> (answer, history)``, listed in ``writer.PLUGINS``:
``pydantic_ai`` here; ``langgraph``.
"""
