"""``play --engine langgraph``: the run as a compiled LangGraph StateGraph (``graph``, ``runtime``, ``engine``)."""
