"""The cyclic garbage collector paused for a bounded piece of work that builds many acyclic objects.

Loading a run, replaying it, inspecting a trace and driving a LangGraph replay each create hundreds of
thousands of long-lived dicts, lists and models and no reference cycles. With the collector on, every
few hundred allocations trigger a pass, and the older generations' passes traverse the whole growing
heap again and again (measured: 2x to 5x slower on 1000- to 10,000-step runs). ``cyclic_gc_paused``
turns it off for the duration and back on only if it was on (nested uses and a caller who disabled it
themselves are left as they were). The little cyclic garbage made meanwhile is collected by the next
pass after it. Standard library only.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def cyclic_gc_paused() -> Iterator[None]:
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
