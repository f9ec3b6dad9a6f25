"""``play --engine hermes``: a fresh real Hermes agent in a child process (``engine`` starts ``driver``)."""
