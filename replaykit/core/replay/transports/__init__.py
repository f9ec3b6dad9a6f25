"""One module per wire API (``core/replay/wire_apis.py`` says what a transport is and how one is added):
``open_transport(endpoint) -> Transport`` builds the provider SDK's client (imported lazily: an extra)
and ``Transport.open_stream(body)`` sends one streamed request, yielding the API's events as dicts."""
