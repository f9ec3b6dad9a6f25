"""The last check before anything leaves the MCP server: no secret from the environment goes out.

The tools never read the environment (the one key a live play needs is read by the engine through
``PlayOptions.api_key()``, from the variable the operator named when starting the server). This pass is
the belt to those braces: every string of every result and error is searched for the values of that
variable and of every variable whose name says it holds a secret, and each occurrence is replaced.
A provider error that echoed a key, or a trace that recorded one, still cannot carry it to the client.
"""

from __future__ import annotations

import os
import re
from typing import Any

#: Variable names that hold secrets (OPENAI_API_KEY, GITHUB_TOKEN, DB_PASSWORD, AWS_SECRET_ACCESS_KEY...).
SECRET_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH)", re.IGNORECASE)
#: Shorter values are not treated as secrets (they would redact ordinary words and numbers).
MIN_SECRET = 8
REPLACEMENT = "[redacted: secret from the environment]"


class Scrubber:
    def __init__(self, extra_names: tuple[str, ...] = (), environ: dict[str, str] | None = None) -> None:
        env = dict(os.environ) if environ is None else environ
        values = {value for name, value in env.items()
                  if (name in extra_names or SECRET_NAME.search(name)) and len(value) >= MIN_SECRET}
        # longest first: a secret that contains another is replaced whole
        self._values = sorted(values, key=len, reverse=True)

    def text(self, value: str) -> str:
        for secret in self._values:
            if secret in value:
                value = value.replace(secret, REPLACEMENT)
        return value

    def __call__(self, value: Any) -> Any:
        if not self._values:
            return value
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.text(k) if isinstance(k, str) else k: self(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self(v) for v in value]
        return value
