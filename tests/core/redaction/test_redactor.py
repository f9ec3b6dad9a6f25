"""Unit behaviour of the Redactor: placeholders, allow-lists, JSON style, caching, errors."""

from __future__ import annotations

import json

import pytest

from replaykit.core.errors import MissingExtra
from replaykit.core.redaction import SECRET_PATTERNS, AnalysisEngine, EngineConfig, Redactor


def test_same_value_same_placeholder_different_values_differ() -> None:
    r = Redactor(mode="patterns")
    a = r.redact_text("mail ann@example.com and bob@example.com")
    b = r.redact_text("again: bob@example.com, then ANN@example.com")
    assert a == "mail <EMAIL_ADDRESS_1> and <EMAIL_ADDRESS_2>"
    assert b == "again: <EMAIL_ADDRESS_2>, then <EMAIL_ADDRESS_1>"


def test_placeholders_are_not_re_redacted() -> None:
    r = Redactor(mode="ner")
    once = r.redact_text("Dear Maria, write to maria@example.com")
    assert r.redact_text(once) == once


def test_allow_list_is_never_touched() -> None:
    r = Redactor(mode="patterns", allow_list=["support@acme.com"])
    out = r.redact_text("write support@acme.com or jo@acme.com")
    assert "support@acme.com" in out and "jo@acme.com" not in out


@pytest.mark.parametrize("indent", [None, 2, 4])
def test_json_in_string_keeps_style_keys_and_validity(indent) -> None:
    value = {"user": {"email": "ann@example.com", "tags": ["a", "b"]}, "n": 3, "ok": True, "café": "é"}
    text = json.dumps(value, indent=indent)
    out = Redactor(mode="patterns").redact_value(text)
    parsed = json.loads(out)
    assert list(parsed) == list(value) and parsed["n"] == 3 and parsed["café"] == "é"
    assert parsed["user"]["email"] == "<EMAIL_ADDRESS_1>"
    assert out == json.dumps(parsed, indent=indent)  # same formatting style


def test_unchanged_json_string_is_returned_verbatim() -> None:
    text = '{ "a" :1,\n"b": [1,2] }'  # odd formatting, nothing sensitive
    assert Redactor(mode="patterns").redact_value(text) is text


def test_key_hints_redact_whole_values_keys_kept() -> None:
    r = Redactor(mode="patterns")
    out = r.redact_value({"password": "hunter2", "first_name": "Ann", "name": "read_file", "max_tokens": 5})
    assert out == {"password": "<SECRET_1>", "first_name": "<PERSON_1>", "name": "read_file", "max_tokens": 5}


def test_every_secret_pattern_compiles_and_matches_an_example() -> None:
    examples = {
        "pem_private_key": "-----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----",
        "anthropic": "sk-ant-api03-" + "a1" * 20,
        "openai": "sk-proj-" + "a1" * 20,
        "github_classic": "ghp_" + "a1" * 18,
        "github_fine_grained": "github_pat_" + "a1" * 30,
        "aws_key_id": "AKIAIOSFODNN7EXAMPLE",
        "aws_secret": "aws_secret_access_key=" + "A1b2" * 10,
        "google_api_key": "AIza" + "b" * 35,
        "google_oauth_secret": "GOCSPX-" + "a1" * 12,
        "google_oauth_token": "ya29." + "a1" * 12,
        "slack_token": "xoxb-1234567890-abcdef",
        "slack_app_token": "xapp-1-A0123456789-abc",
        "slack_webhook": "https://hooks.slack.com/services/T000/B000/" + "x" * 24,
        "stripe": "sk_live_" + "a1" * 10,
        "stripe_webhook": "whsec_" + "a1" * 12,
        "huggingface": "hf_" + "a1" * 16,
        "gitlab": "glpat-" + "a1" * 12,
        "npm": "npm_" + "a" * 36,
        "jwt": "eyJhbGciOiJIUzI1.eyJzdWIiOiIxMjM0.c2lnbmF0dXJlMTIz",
        "bearer": "Authorization: Bearer abc123def456ghi",
        "authorization_header": "X-Api-Key: abcd1234efgh",
        "url_userinfo": "https://u:p4ss@host",
        "url_query_secret": "https://h/x?token=abcd1234efgh",
        "assignment": "DB_PASSWORD=hunter2x",
        "groq": "gsk_" + "a1" * 16,
        "xai": "xai-" + "a1" * 16,
        "perplexity": "pplx-" + "a1" * 16,
        "replicate": "r8_" + "a1" * 16,
        "sendgrid": "SG." + "a" * 20 + "." + "b" * 20,
        "twilio": "SK" + "0a" * 16,
        "digitalocean": "dop_v1_" + "ab" * 32,
        "shopify": "shpat_" + "ab" * 16,
        "databricks": "dapi" + "ab" * 16,
        "pypi": "pypi-AgE" + "a" * 60,
        "azure_storage": "AccountKey=" + "Ab1+" * 10 + "==",
        "telegram_bot": "123456789:AA" + "b" * 33,
        "discord_bot": "M" + "a" * 23 + "." + "b" * 6 + "." + "c" * 27,
        "prose": "my password is hunter2!",
        "cli_flag": "mysql -u root -p'S3cr3t!pw'",
        "postman": "PMAK-" + "a1" * 12 + "-" + "b2" * 17,
        "discord_webhook": "https://discord.com/api/webhooks/123456789012345678/" + "Ab1Cd2Ef3Gh4" * 6,
        "passphrase": "the passphrase is 'correct horse battery staple'",
    }
    assert set(examples) == {p.name for p in SECRET_PATTERNS}
    r = Redactor(mode="patterns")
    for name, text in examples.items():
        entity = next(p.entity for p in SECRET_PATTERNS if p.name == name)
        assert f"<{entity}_" in r.redact_text(text), name


def test_cache_hits_on_repeated_text() -> None:
    engine = AnalysisEngine(EngineConfig(mode="patterns"))
    r = Redactor(engine=engine)
    text = "system prompt with ann@example.com " * 50
    r.redact_texts([text, text + "x"])
    misses = engine.stats.misses
    Redactor(engine=engine).redact_texts([text, text + "x"])  # a new run: analysis is still cached
    assert engine.stats.misses == misses and engine.stats.hits >= 2


def test_long_text_is_chunked_with_correct_offsets() -> None:
    filler = ("lorem ipsum dolor sit amet " * 40 + "\n\n") * 10
    text = filler + "contact ann@example.com\n" + filler + "and bob@example.com"
    out = Redactor(mode="patterns").redact_text(text)
    assert "contact <EMAIL_ADDRESS_1>" in out and out.endswith("and <EMAIL_ADDRESS_2>")


def test_missing_model_names_the_extra() -> None:
    with pytest.raises(MissingExtra, match=r"pip install 'replaykit\[redact\]'"):
        AnalysisEngine(EngineConfig(mode="ner", model="no_such_spacy_model_xyz"))


def test_unknown_mode_is_bad_input() -> None:
    from replaykit.core.errors import BadInput

    with pytest.raises(BadInput):
        AnalysisEngine(EngineConfig(mode="fast"))  # type: ignore[arg-type]
