"""Screenshot checks: count a PNG's colours by drawing it on a canvas in a plain browser page (no
imaging library needed, and fast: a full-page screenshot has about a million pixels)."""

from __future__ import annotations

import base64
from collections import Counter
from typing import Any

_COUNT = """async (src) => {
  const img = new Image(); img.src = src; await img.decode();
  const canvas = document.createElement('canvas'); canvas.width = img.width; canvas.height = img.height;
  const ctx = canvas.getContext('2d'); ctx.drawImage(img, 0, 0);
  const d = ctx.getImageData(0, 0, canvas.width, canvas.height).data; const m = new Map();
  for (let i = 0; i < d.length; i += 4) { const k = (d[i] << 16) | (d[i + 1] << 8) | d[i + 2]; m.set(k, (m.get(k) || 0) + 1); }
  return Array.from(m.entries());
}"""


def colours(browser: Any, data: bytes) -> Counter[tuple[int, int, int]]:
    """Pixel count per RGB colour of PNG ``data``, counted in a throw-away about:blank page of ``browser``
    (its own context, closed at once: a page left open would put the page under test in the background,
    where Chromium throttles its meta refresh)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    context = browser.new_context()
    try:
        pairs = context.new_page().evaluate(_COUNT, "data:image/png;base64," + base64.b64encode(data).decode())
    finally:
        context.close()
    return Counter({((k >> 16) & 255, (k >> 8) & 255, k & 255): n for k, n in pairs})


def has_colour(counts: Counter[tuple[int, int, int]], rgb: tuple[int, int, int], *, at_least: int = 50,
               tolerance: int = 6) -> bool:
    """At least ``at_least`` pixels within ``tolerance`` of ``rgb`` on every channel."""
    total = 0
    for colour, n in counts.items():
        if all(abs(a - b) <= tolerance for a, b in zip(colour, rgb, strict=True)):
            total += n
    return total >= at_least
