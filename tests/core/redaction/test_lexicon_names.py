"""Names by the Faker lexicon (_lexicon.py), names of other scripts, address shapes of more countries,
and the precision guards that came with them. The sentences are written here, not taken from the
corpus parts (tests/core/redaction/test_corpus.py measures those)."""

from __future__ import annotations

import pytest

from replaykit.core.redaction import Redactor

pytest.importorskip("presidio_analyzer")
pytest.importorskip("faker")

LEAKS = [  # (text, a piece of the value that must be gone)
    ("ping bob about the failing job", "bob"), ("bob says the staging db is down", "bob"),
    ("Thanks rachel goldberg, that fixed it!", "goldberg"), ("Escalate to JONATHAN REYES now", "REYES"),
    ("Jonathan Reyes approved the refund", "Reyes"), ("Dr. Smith will see you", "Smith"),
    ("per conversation with dr. okonkwo", "okonkwo"), ("la señora García pidió un reembolso", "García"),
    ("my name is wojciech", "wojciech"), ("Bob's ticket is open", "Bob"),
    ("请联系张伟，他负责这个项目。", "张伟"), ("李娜说发票已经寄出了。", "李娜"), ("我叫赵磊", "赵磊"),
    ("黄晓明先生来电", "黄晓明"), ("담당자: 이서연", "이서연"), ("Меня зовут Ольга.", "Ольга"),
    ("спасибо, Дмитрий", "Дмитрий"), ("شكرا يا خالد", "خالد"), ("मेरा नाम राहुल शर्मा है", "शर्मा"),
    ("ship to 742 evergreen terrace", "evergreen"), ("Berliner Straße 12, 10115 Berlin", "Berliner"),
    ("ul. Marszałkowska 84/92, 00-514 Warszawa", "Marszałkowska"), ("ул. Тверская, д. 7", "Тверская"),
    ("Corso Buenos Aires 43, Milano", "Buenos"), ("88 rue des martyrs", "martyrs"),
    ("東京都千代田区丸の内1-9-1", "丸の内"), ("上海市黄浦区南京东路100号", "南京东路"),
    ("서울특별시 강남구 테헤란로 152", "테헤란로"), ("1 Infinite Loop, Cupertino", "Infinite"),
    ("my number is 0612345678", "12345678"),
]
KEEP = [
    "Grant access to the bucket", "will young people use it", "London Heathrow", "Victoria Station", "Dr. Pepper",
    "Ruby on Rails", "Apollo Server", "use Django Rest Framework", "Jenkins Pipeline failed",
    "60 ms best of 40 runs", "on the dev box", "(text / media parts)", "the price list", "`len(messages)`",
    "The Queen's Gambit (TV series)", "Newton's laws of motion", "the server's logs", "keep: 3 lane highway plan",
    "we took 2 main roads", "Zendesk Workspace broke after the upgrade", "Configure Opsgenie Webhook for staging",
    "the Parquet webhook is failing", "Supabase Dashboard broke after the upgrade", "马上部署到生产环境。",
    "请检查服务器的日志，然后重启。", "서버를 다시 시작해 주세요.", "Роман выпущен в 2020 году.", "يرجى إعادة تشغيل الخادم.",
    "विजय के बाद जश्न",
]


@pytest.mark.parametrize("mode", ["patterns", "ner"])
def test_names_and_addresses_beyond_the_tuning_part(mode: str) -> None:
    red = Redactor(mode=mode).redact_text  # type: ignore[arg-type]
    leaked = [text for text, value in LEAKS if value in red(text)]
    assert not leaked, leaked
    damaged = [text for text in KEEP if red(text) != text]
    assert not damaged, damaged


def test_the_lexicon_comes_from_faker_and_is_large() -> None:
    from replaykit.core.redaction._lexicon import lexicon

    lex = lexicon()
    assert lex.source.startswith("faker ")
    assert len(lex.given) > 20_000 and len(lex.surnames) > 20_000
    assert {"ingrid", "sergei", "ольга", "민수", "राहुल"} <= lex.given and {"ohlsson", "शर्मा"} <= lex.surnames
    # a word in one locale's list only is no name on its own ("media" is in Faker's big en list)
    assert lex.given_locales["john"] > 10 and lex.given_locales.get("media", 0) <= 1


def test_english_words_include_inflections_and_function_words() -> None:
    from replaykit.core.redaction._names import english_word

    for word in ("answered", "misses", "typed", "went", "itself", "whose", "trajectories", "children"):
        assert english_word(word), word
    for word in ("sergei", "ohlsson", "whitaker", "kubectl"):
        assert not english_word(word), word
