"""Keys that say what their value is.

``{"password": "hunter2"}`` needs no detector: the key names a secret, so the whole value is
replaced, in both modes. Only unambiguous names qualify; a bare ``name`` or ``key`` is everywhere in
tool schemas (tool names, dict keys, file names) and is left to the detectors.
"""

from __future__ import annotations

import re

_NORMALISE = re.compile(r"[^a-z0-9]")

_EXACT: dict[str, str] = {}
for _entity, _names in {
    "SECRET": (
        "password passwd pwd passphrase secret clientsecret apikey xapikey apitoken accesstoken "
        "refreshtoken idtoken authtoken sessiontoken bearertoken token secretkey secretaccesskey "
        "awssecretaccesskey privatekey accesskey signingkey encryptionkey authorization "
        "proxyauthorization cookie setcookie sessionid csrftoken xcsrftoken xauthtoken credentials"
    ),
    "EMAIL_ADDRESS": "email emailaddress mail useremail contactemail",
    "PHONE_NUMBER": "phone phonenumber telephone tel mobile mobilenumber cellphone fax",
    "PERSON": (
        "firstname lastname fullname givenname familyname surname middlename displayname "
        "contactname customername username realname authorname author assignee reporter recipientname "
        "sendername patientname studentname employeename"
    ),
    "STREET_ADDRESS": "address streetaddress street addressline1 addressline2 homeaddress",
    "US_SSN": "ssn socialsecuritynumber",
    "DATE_OF_BIRTH": "dob dateofbirth birthdate birthday",
    "ID_NUMBER": "passport passportnumber nationalid driverslicense driverlicense taxid",
    "CREDIT_CARD": "cardnumber creditcard creditcardnumber ccnumber",
    "IBAN_CODE": "iban",
}.items():
    for _n in _names.split():
        _EXACT[_n] = _entity


def key_entity(key: str | None) -> str | None:
    """Entity type implied by a JSON key, or None."""
    if not key or len(key) > 64:
        return None
    norm = _NORMALISE.sub("", key.lower())
    found = _EXACT.get(norm)
    if found is not None:
        return found
    # api_key-like suffixes on longer names: openai_api_key, github_token, db_password.
    if norm.endswith(("apikey", "password", "secret", "passwd", "accesstoken", "privatekey")):
        return "SECRET"
    return None


# Keys whose values are opaque provider tokens: a thinking signature, encrypted reasoning, the ids a
# provider hands back and expects again. Rewriting one breaks the run (the provider rejects a changed
# signature, a tool result no longer names its call), and they hold no text a person wrote.
_OPAQUE = frozenset(
    "signature thoughtsignature thinkingsignature encryptedcontent encrypted encryptedreasoning "
    "systemfingerprint redactedthinking".split()
)
# ids are opaque inside provider data (provider_details, opaque blocks); in a tool's own JSON an
# "id" may be a customer's e-mail address, and is left to the detectors there
_PROVIDER_IDS = frozenset(
    "id callid toolcallid tooluseid itemid responseid previousresponseid reasoningid messageid".split())
#: block types whose whole body is opaque (Anthropic's redacted_thinking carries encrypted ``data``)
OPAQUE_BLOCK_TYPES = frozenset({"redacted_thinking", "encrypted_reasoning"})


def opaque_key(key: str | None, provider_data: bool = False) -> bool:
    """Whether ``key`` names an opaque provider token (never rewritten); ``provider_data``: the value
    is provider data (ids count too)."""
    if not key or len(key) > 64:
        return False
    norm = _NORMALISE.sub("", key.lower())
    return norm in _OPAQUE or (provider_data and norm in _PROVIDER_IDS)
