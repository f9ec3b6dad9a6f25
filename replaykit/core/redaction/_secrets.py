"""Recognizers for the secrets Presidio does not know about.

The patterns are plain data (``SecretPattern``) so they can be read, tested and documented without
Presidio; ``build_secret_recognizers`` turns them into Presidio ``PatternRecognizer`` objects.

Presidio compiles patterns with the ``regex`` module and, by default, DOTALL|MULTILINE|IGNORECASE.
Key prefixes are case sensitive (``AKIA`` is not ``akia``), so every recognizer here is built with
explicit flags and opts into case-insensitivity inline with ``(?i:...)`` where it is wanted.
Look-behinds keep a key's *name* (``API_KEY=``, ``Authorization: Bearer``) out of the span, so the
redacted text still says what was there.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class SecretPattern:
    entity: str
    name: str
    regex: str
    score: float = 1.0


# Names of assignments and headers whose value is a credential. Anchored at the end of the name so
# MAX_TOKENS / TOKENIZER / KEYBOARD do not qualify while API_KEY, DB_PASSWORD, GITHUB_TOKEN do.
_SECRET_NAME = (
    r"(?i:[A-Za-z0-9_.-]*(?:api[_-]?key|apikey|secret[_-]?key|secret|token|passwd|password|pwd|"  # noqa: S105
    r"pass|credentials?|private[_-]?key|access[_-]?key|auth[_-]?key|client[_-]?secret|"
    r"session[_-]?id|cookie|signing[_-]?key|encryption[_-]?key|webhook[_-]?url|dsn|"
    # the word for password in other languages ("Passwort: ...", "contraseña = ...")
    r"passwort|kennwort|wachtwoord|contrase[ñn]a|senha|mot[ _-]de[ _-]passe|has[łl]o|l[öo]senord|salasana|"
    r"passord|adgangskode|пароль|密码|密碼|パスワード|비밀번호)"
    # a suffix that names the encoding or role of the same secret (SECRET_KEY_BASE, TOKEN_B64); not
    # any suffix: TOKEN_URL, PASSWORD_FILE, PASSWORD_MIN_LENGTH name something else
    r"(?:[_-](?:base|value|b64|base64|hex|raw|plain|plaintext|str|string))?)"
)
# A value that is a reference, not a secret: ${VAR}, $VAR, <PLACEHOLDER>, os.environ[...], "***".
_NOT_A_REFERENCE = r"(?![$<{*]|os\.environ|process\.env|getenv|None\b|null\b|true\b|false\b|xxx)"

SECRET_PATTERNS: tuple[SecretPattern, ...] = (
    # --- PEM private keys: whole block; a truncated block still loses its body -------------------
    SecretPattern(
        "PRIVATE_KEY",
        "pem_private_key",
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
        r"[\s\S]*?(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|(?=\"|$(?![\s\S])))",
    ),
    # --- Vendor keys (prefix-identified, high precision) -------------------------------------------
    SecretPattern(
        "ANTHROPIC_API_KEY", "anthropic", r"\bsk-ant-(?:api|admin|oat|sid)\d{2}-[A-Za-z0-9_-]{20,}"
    ),
    SecretPattern(
        "OPENAI_API_KEY",
        "openai",
        r"\bsk-(?!ant-)(?:proj-|svcacct-|admin-|None-)?(?=[A-Za-z0-9_-]*\d)[A-Za-z0-9_-]{20,}",
        0.95,
    ),
    SecretPattern("GITHUB_TOKEN", "github_classic", r"\bgh[pousr]_[A-Za-z0-9]{30,}"),
    SecretPattern("GITHUB_TOKEN", "github_fine_grained", r"\bgithub_pat_[A-Za-z0-9_]{40,}"),
    SecretPattern("AWS_ACCESS_KEY_ID", "aws_key_id", r"\b(?:AKIA|ASIA|ABIA|ACCA|AROA|AIDA)[A-Z0-9]{16}\b"),
    SecretPattern(
        "AWS_SECRET_ACCESS_KEY",
        "aws_secret",
        r"(?<=(?i:aws)[A-Za-z0-9_ .-]{0,30}(?i:secret)[A-Za-z0-9_ .-]{0,30}[\"']?\s*[:=]\s*[\"']?)"
        r"[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+])",
    ),
    SecretPattern("GOOGLE_API_KEY", "google_api_key", r"\bAIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])"),
    SecretPattern("GOOGLE_OAUTH_SECRET", "google_oauth_secret", r"\bGOCSPX-[0-9A-Za-z_-]{20,}"),
    SecretPattern("GOOGLE_OAUTH_TOKEN", "google_oauth_token", r"\bya29\.[0-9A-Za-z_-]{20,}"),
    SecretPattern("SLACK_TOKEN", "slack_token", r"\bxox[abposre]-[0-9A-Za-z-]{10,}"),
    SecretPattern("SLACK_TOKEN", "slack_app_token", r"\bxapp-\d-[0-9A-Za-z-]{10,}"),
    SecretPattern(
        "SLACK_WEBHOOK",
        "slack_webhook",
        r"https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9/_-]{20,}",
    ),
    SecretPattern("STRIPE_KEY", "stripe", r"\b(?:sk|rk|pk)_(?:live|test)_[0-9A-Za-z]{16,}"),
    SecretPattern("STRIPE_KEY", "stripe_webhook", r"\bwhsec_[0-9A-Za-z]{20,}"),
    SecretPattern("HUGGINGFACE_TOKEN", "huggingface", r"\bhf_[A-Za-z0-9]{30,}"),
    SecretPattern("GITLAB_TOKEN", "gitlab", r"\bglpat-[A-Za-z0-9_-]{20,}"),
    SecretPattern("NPM_TOKEN", "npm", r"\bnpm_[A-Za-z0-9]{36}\b"),
    # More providers seen in agent configs (prefix-identified).
    SecretPattern("API_KEY", "groq", r"\bgsk_[A-Za-z0-9]{30,}"),
    SecretPattern("API_KEY", "xai", r"\bxai-[A-Za-z0-9]{30,}"),
    SecretPattern("API_KEY", "perplexity", r"\bpplx-[A-Za-z0-9]{30,}"),
    SecretPattern("API_KEY", "replicate", r"\br8_[A-Za-z0-9]{30,}"),
    SecretPattern("API_KEY", "sendgrid", r"\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}"),
    SecretPattern("API_KEY", "twilio", r"\b(?:SK|AC)[0-9a-f]{32}\b"),
    SecretPattern("API_KEY", "digitalocean", r"\bdo[pro]_v1_[a-f0-9]{64}\b"),
    SecretPattern("API_KEY", "shopify", r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b"),
    SecretPattern("API_KEY", "databricks", r"\bdapi[a-f0-9]{32}\b"),
    SecretPattern("API_KEY", "pypi", r"\bpypi-AgE[A-Za-z0-9_-]{50,}"),
    SecretPattern("API_KEY", "azure_storage", r"(?<=(?i:AccountKey|SharedAccessKey)=)[A-Za-z0-9+/]{20,}={0,2}"),
    SecretPattern("API_KEY", "telegram_bot", r"\b\d{8,10}:AA[A-Za-z0-9_-]{33}\b"),
    SecretPattern("API_KEY", "postman", r"\bPMAK-[0-9a-f]{24}-[0-9a-f]{34}\b"),
    # a Discord webhook URL is its own credential: its last segment is the token
    SecretPattern("API_KEY", "discord_webhook",
                  r"(?<=\bdiscord(?:app)?\.com/api/webhooks/\d{17,20}/)[A-Za-z0-9_-]{50,100}"),
    SecretPattern(
        "API_KEY", "discord_bot", r"\b[MNO][A-Za-z0-9_-]{23,25}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38}\b"
    ),
    # --- JWTs (header and payload are base64url JSON objects: eyJ...) ------------------------------
    SecretPattern("JWT", "jwt", r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
    # --- Authorization headers: the credential after the scheme -----------------------------------
    SecretPattern(
        "AUTH_TOKEN",
        "bearer",
        r"(?<=\b(?i:bearer)\s+)(?=[A-Za-z0-9._~+/-]*[0-9])[A-Za-z0-9._~+/-]{12,}=*",
    ),
    SecretPattern(
        "AUTH_TOKEN",
        "authorization_header",
        r"(?<=\b(?i:(?:proxy-)?authorization|x-api-key|api-key|x-auth-token|x-access-token)[\"']?\s*[:=]\s*"
        r"[\"']?(?:(?i:basic|token|digest|apikey)\s+)?)" + _NOT_A_REFERENCE + r"[A-Za-z0-9._~+/=:-]{8,}",
    ),
    # --- Credentials embedded in URLs: scheme://user:password@host --------------------------------
    SecretPattern(
        "URL_CREDENTIALS",
        "url_userinfo",
        # any scheme; the user may be empty (redis://:pw@host) and the password may hold "@"
        r"(?<=\b[A-Za-z][A-Za-z0-9+.-]{1,20}://)[^\s:/@\"'<>]{0,128}:[^\s/\"'<>]{1,256}?"
        r"(?=@[^\s@/\"'<>]*(?:[/?#:\s\"'<>]|$))",
    ),
    SecretPattern(
        "URL_CREDENTIALS",
        "url_query_secret",
        r"(?<=[?&](?i:access_token|token|api_key|apikey|key|secret|password|passwd|client_secret|"
        r"sig|signature|auth|x-amz-signature|x-amz-credential|x-amz-security-token)=)[^&\s#\"'<>]{8,}",
    ),
    # --- .env / config / JSON-ish assignments: NAME=value, name: value, "name": "value" ------------
    # --- Command-line flags: mysql -p'...', --password=..., --token ... ---------------------------
    SecretPattern(
        "SECRET",
        "cli_flag",
        r"(?:(?<=\b(?:mysql|mysqldump|mysqladmin|mariadb|mariadb-dump|mysqlsh)\b[^\n|;&]{0,80}?\s-p[\"']?)"
        # curl/wget/http tools: -u user:PASS, --user user:PASS (the password part only)
        r"|(?<=(?:^|\s)(?:-u|--user|--proxy-user)\s+[\"']?[^\s:\"'$]{1,64}:)"
        r"|(?<=(?:^|\s)--(?i:password|passwd|pass|token|api-key|apikey|secret|client-secret|auth-token|access-token)"
        r"(?:=|\s+)[\"']?))" + _NOT_A_REFERENCE
        + r"(?=[^\s\"']*[0-9!@#$%^&*_+=~])[^\s\"']{6,}",
        0.85,
    ),
    SecretPattern(
        "SECRET",
        "assignment",
        r"(?<=(?:^|[\s{,;(\"'])(?:export\s+)?[\"']?" + _SECRET_NAME + r"[\"']?[ \t]*(?::=|=|:)[ \t]*[\"']?)"
        + _NOT_A_REFERENCE
        + r"(?![0-9]+(?![^\s\"',;}]))[^\s\"',;}]{6,}",
        0.9,
    ),
)

# Lower-case literals of which at least one occurs in any text an entity's patterns can match. A
# recognizer whose hints are all absent is skipped: most trace text holds no secret, and a Presidio
# recognizer call costs tens of microseconds even when its regex finds nothing.
ENTITY_HINTS: dict[str, tuple[str, ...]] = {
    "PRIVATE_KEY": ("private key",),
    "ANTHROPIC_API_KEY": ("sk-ant-",),
    "OPENAI_API_KEY": ("sk-",),
    "GITHUB_TOKEN": ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    "AWS_ACCESS_KEY_ID": ("akia", "asia", "abia", "acca", "aroa", "aida"),
    "AWS_SECRET_ACCESS_KEY": ("secret",),
    "GOOGLE_API_KEY": ("aiza",),
    "GOOGLE_OAUTH_SECRET": ("gocspx-",),
    "GOOGLE_OAUTH_TOKEN": ("ya29.",),
    "SLACK_TOKEN": ("xox", "xapp-"),
    "SLACK_WEBHOOK": ("hooks.slack.com",),
    "STRIPE_KEY": ("_live_", "_test_", "whsec_"),
    "HUGGINGFACE_TOKEN": ("hf_",),
    "GITLAB_TOKEN": ("glpat-",),
    "NPM_TOKEN": ("npm_",),
    "JWT": ("eyj",),
    "AUTH_TOKEN": ("bearer", "authorization", "api-key", "auth-token", "access-token"),
    "URL_CREDENTIALS": ("://", "?", "&"),
    "SECRET": ("key", "secret", "token", "pass", "pwd", "credential", "cookie", "session", "dsn", "webhook",
               "pin", "code", "mysql", "mariadb", "-u ", "--user", "mnemonic", "phrase", "kennwort", "wachtwoord",
               "contrase", "senha", "hasło", "haslo", "senord", "salasana", "adgangskode", "пароль", "密码", "密碼",
               "パスワード", "비밀번호"),
    "API_KEY": ("gsk_", "xai-", "pplx-", "r8_", "sg.", "sk", "ac", "do", "shp", "dapi", "pypi-", "accountkey",
                "sharedaccesskey", ":aa", ".", "pmak-", "discord"),
}

# Secrets in prose: "my password is hunter2!", "the API key is 8f3k2...". The value must contain a
# digit or a symbol, so "the password is incorrect" keeps its word.
_PROSE = SecretPattern(
    "SECRET",
    "prose",
    r"(?<=\b(?i:password|passcode|passphrase|pin|api[ _-]?key|secret|token|access code|passwort|kennwort|"
    r"wachtwoord|contrase[ñn]a|senha|mot de passe)\s+(?i:is|was|ist|war|est|es|é|=|:)\s+[\"'`]?)"
    + _NOT_A_REFERENCE + r"(?=[^\s\"'`]*[0-9!@#$%^&*_+=~-])[^\s\"'`,;]{6,}(?<![.,;:!?])",
    0.8,
)
# A passphrase is words: after "passphrase is", a quoted value of any shape is the secret.
_PASSPHRASE = SecretPattern(
    "SECRET",
    "passphrase",
    r"(?<=\b(?i:passphrase|pass phrase|mnemonic|seed phrase|recovery phrase)(?:\s+(?i:is|was)\s+|\s*[=:]\s*)[\"'`])"
    r"(?![$<{])[^\"'`\n]{8,200}(?=[\"'`])",
    0.8,
)
SECRET_PATTERNS = (*SECRET_PATTERNS, _PROSE, _PASSPHRASE)

# Placeholder-looking text (our own output) must never be re-redacted; see _engine.
PLACEHOLDER_REGEX = r"<[A-Z][A-Z0-9_]*_\d+>"


def secret_entities() -> list[str]:
    return sorted({p.entity for p in SECRET_PATTERNS})


def build_secret_recognizers(*, gated: bool = True) -> list[Any]:
    """One Presidio PatternRecognizer per entity type, case-sensitive unless a pattern says otherwise."""
    import regex
    from presidio_analyzer import Pattern, PatternRecognizer

    by_entity: dict[str, list[SecretPattern]] = {}
    for p in SECRET_PATTERNS:
        by_entity.setdefault(p.entity, []).append(p)
    flags = regex.DOTALL | regex.MULTILINE
    gate_cls = gated_pattern_recognizer_class()

    def make(entity: str, **kwargs: Any) -> Any:
        return gate_cls(hints=ENTITY_HINTS[entity], **kwargs) if gated else PatternRecognizer(**kwargs)

    return [
        make(
            entity,
            supported_entity=entity,
            name=f"replaykit_{entity.lower()}",
            patterns=[Pattern(p.name, p.regex, p.score) for p in pats],
            global_regex_flags=flags,
        )
        for entity, pats in by_entity.items()
    ]


_GATED: Any = None


def gated_pattern_recognizer_class() -> Any:
    """PatternRecognizer that returns nothing at once when none of its hint literals is in the text."""
    global _GATED
    if _GATED is None:
        from presidio_analyzer import PatternRecognizer

        class GatedPatternRecognizer(PatternRecognizer):  # type: ignore[misc]
            def __init__(self, *, hints: tuple[str, ...], **kwargs: Any) -> None:
                super().__init__(**kwargs)
                self.hints = hints

            def analyze(self, text: str, entities: list[str], nlp_artifacts: Any = None,
                        regex_flags: Any = None) -> list[Any]:
                low = text.lower()
                if not any(h in low for h in self.hints):
                    return []
                return list(super().analyze(text, entities, nlp_artifacts, regex_flags))

        _GATED = GatedPatternRecognizer
    return _GATED
