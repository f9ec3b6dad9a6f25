"""Sentences of issue 26's third round, outside the corpus: each leak must go, each keep must stay.

The corpus parts score families of templates; these pin single shapes the third round taught the
detectors (and the false positives it fixed), so that a later change that loses one fails by name.
"""

from __future__ import annotations

import pytest

from replaykit.core.redaction import Redactor

LEAKS = [
    # secrets: the shape after a flag, a word for password in another language, a suffixed name
    ("mysql -u root -p'S3cr3t!pw' shop", "S3cr3t!pw"),
    ("deploy with --api-key=a8F3kq9ZpL2x", "a8F3kq9ZpL2x"),
    ("run tool --token 9f8e7d6c5b4a3 now", "9f8e7d6c5b4a3"),
    ("Das Passwort ist Tr0mb0ne#77", "Tr0mb0ne#77"),
    ("Het wachtwoord is Zonnebl0em!9", "Zonnebl0em!9"),
    ("SECRET_KEY_BASE=4f9a0c2e7b1d8e3f6a5c", "4f9a0c2e7b1d8e3f6a5c"),
    ("the deploy key is Xk29fLqP0zR7wT4m", "Xk29fLqP0zR7wT4m"),
    # addresses with a postcode and town after them, IDs after a label and a verb
    ("Adresse: Sveavägen 44, 111 43 Stockholm", "Sveavägen 44"),
    ("ship to Keizersgracht 123, 1016 GV Amsterdam", "Keizersgracht 123"),
    ("social: 123 45 6789 on file", "123 45 6789"),
    ("her passport number is X4829173", "X4829173"),
    # names: possessive, a speaker at line start, Irish, Polish, Vietnamese, Chinese and Korean cues
    ("Siobhan Kavanagh's laptop was stolen", "Kavanagh"),
    ("maria: can you resend the invoice?", "maria"),
    ("according to Siobhán Ní Bhriain the fix is in", "Bhriain"),
    ("przypisane do: Grzegorz Brzęczyszczykiewicz", "Brzęczyszczykiewicz"),
    ("经办人：李建国", "李建国"),
    ("담당자는 김민준입니다", "김민준"),
    ("attendees: Nguyen Van Thanh, ops", "Thanh"),
    # lower-case names after a preposition or at a sentence start: the lexicon knows them
    ("email sergei about the refund", "sergei"),
    ("henrike is out today", "henrike"),
    ("talked to okonkwo yesterday", "okonkwo"),
    # a phone number glued to CJK words (no spaces in Chinese and Japanese), cues in those scripts
    ("電話番号は03-1234-5678です", "1234-5678"),
    ("联系电话：13800138000", "13800138000"),
    # national IDs after their own label; e-mail at an IP literal, a dotless host after a cue, obfuscated
    ("Personalausweis-Nr. L01X00T47", "L01X00T47"),
    ("codice fiscale RSSMRA85T10A562S", "RSSMRA85T10A562S"),
    ("PESEL 85010112345", "85010112345"),
    ("我的身份证号是110101199003077777的", "110101199003077777"),
    ("주민등록번호 900101-1234567", "1234567"),
    ("root@[10.0.0.5] bounced", "root@"),
    ("email: admin@intranet", "admin@intranet"),
    ("write to jane(at)example.com", "jane(at)"),
    ("jane at example dot com", "jane at"),
    # after a greeting, a sign-off or a role label: a name no lexicon holds, when it is no English word
    ("Thanks, Priyanka", "Priyanka"),
    ("Signed, Olamide Adeyemi", "Adeyemi"),
    ("Applicant: Zanele Dlamini", "Dlamini"),
    ("assigned to Chidi Okonkwo", "Okonkwo"),
    # chat shapes in lower case: a mention, "X and i", "X and Y", a question, a list, after "call with"
    ("@priya can you check", "priya"),
    ("ok so bob and i fixed it", "bob"),
    ("fatima and omar are out", "omar"),
    ("can ingrid review this?", "ingrid"),
    ("is yusuf on call today?", "yusuf"),
    ("meeting notes - attendees: ravi, sofia, chen", "sofia"),
    ("call with dmitri at 4", "dmitri"),
    ("waiting on lukas for the keys", "lukas"),
    # more credential shapes: a vendor prefix, a webhook's token, curl's user:password, a passphrase
    ("postman PMAK-64a1b2c3d4e5f6a7b8c9d0e1-0123456789abcdef0123456789abcdef01", "0123456789abcdef0123"),
    ("https://discord.com/api/webhooks/123456789012345678/" + "Ab1Cd2Ef3Gh4" * 6, "Ab1Cd2Ef3Gh4Ab1Cd2Ef3"),
    ("curl -u admin:Adm1n!2024 https://ci.example/api", "Adm1n!2024"),
    ("the passphrase is 'correct horse battery staple'", "horse battery"),
    ('mnemonic: "abandon ability able about above absent absorb"', "ability able"),
]

KEEPS = [
    "mkdir -p build/out && docker run -p 8080:80 nginx",
    "echo $PW | docker login --password-stdin registry.example",
    "gh auth login --token $GITHUB_TOKEN",
    "apiKey = process.env.API_KEY",
    "TOKEN_URL=https://auth.example/token",
    "PASSWORD_FILE=/run/secrets/db",
    "PASSWORD_MIN_LENGTH=12",
    "Le Monde published the story on Monday",
    "invite the team to Retool",
    "the license key field is optional in settings",
    # technical prose: after a preposition or opening a sentence, an unknown word is a tool, not a person
    "from pathlib import Path",
    "retry with jittered backoff and Retry-After",
    "the file is compressed with gzip first",
    "progress goes to stderr, one line per step",
    "prices come from genai-prices, imported lazily",
    "replaykit has the shape of a compiler",
    "where hermes-agent is not installed, the bench skips it",
    "its email recognizer otherwise fetches the list",
    "订单号2024061112345已发货",
    "构建号 20240611123 完成",
    "the PAN card scheme changed in 2024",
    "set pan to 50 percent",
    "root@web-01:~$ ls",
    "scp file deploy@build01:/tmp",
    "look at example.com for docs",
    "Hi Team, the deploy is done",
    "Client: Postman",
    "Customer: Contoso",
    "Name: Kubernetes",
    "Driver: Nvidia 535",
    "curl -u $USER:$PASS https://ci.example",
    'the phrase "hello world again" is printed',
    # a capitalised pair after a preposition with an English word and no name word in it: a product
    "Microsoft Teams and Google Meet are both supported",
    "Synced with Apple Music",
    "Signed with Adobe Sign",
    "Cheers Datadog",
    "best Kafka settings for throughput",
    "ping @here",
    "@app.route('/')",
    "npm i @types/node",
    "salt and pepper, black and white",
    "is django installed? can redis handle it?",
    "mark and sweep gc",
    "tests for luca pass",
    "depends on numpy",
]


@pytest.fixture(scope="module", params=["patterns", "ner"])
def redactor(request) -> Redactor:
    return Redactor(mode=request.param)


@pytest.mark.parametrize(("text", "value"), LEAKS, ids=[v for _, v in LEAKS])
def test_leak_is_removed(redactor: Redactor, text: str, value: str) -> None:
    out = redactor.redact_text(text)
    assert value not in out, out
    assert "<" in out  # replaced by a placeholder, not dropped


@pytest.mark.parametrize("text", KEEPS)
def test_hard_negative_is_kept(redactor: Redactor, text: str) -> None:
    assert redactor.redact_text(text) == text
