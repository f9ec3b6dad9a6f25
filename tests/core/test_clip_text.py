"""``clip_text`` reads only the head of a long text yet gives what collapsing the whole text would."""

from __future__ import annotations

import random

import pytest

from replaykit.core.replay.replay_doc import clip_text

# pure text functions: the same in every environment (run once, in hermes)
pytestmark = pytest.mark.single_env


def _whole(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def test_clip_equals_collapsing_the_whole_text():
    rng = random.Random(7)
    for _ in range(20000):
        text = "".join(rng.choice("ab  \n\t") for _ in range(rng.randint(0, 600)))
        limit = rng.randint(1, 200)
        assert clip_text(text, limit) == (_whole(text, limit) if text else "")


def test_clip_of_a_huge_text_is_cut():
    assert clip_text("word " * 1_000_000, 20) == ("word " * 4).strip()[:19] + "…"
