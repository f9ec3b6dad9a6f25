"""``play --engine pydantic-ai``: the run in a real PydanticAI ``Agent`` (history conversion in ``messages``)."""
