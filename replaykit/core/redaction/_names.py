"""Names the English NER model cannot see: any letter case, and non-Latin scripts in context.

* Latin, any case: a common given name (``FIRST_NAMES``: international given names that are not also
  ordinary English words, so no "will", "grace" or "mark") followed by a surname-like word
  (``maria gonzalez``, ``JAMES WILSON``), or a capitalised given name followed by a verb
  (``Maria lives``). Surname-first Vietnamese names by their surname (``Nguyen Van An``).
* Cyrillic and Greek: two capitalised words in a row (ordinary words after the first in a
  sentence are lower case in these languages).
* Chinese: a common surname and one or two characters, introduced by a word for customer,
  contact, person in charge, or before a verb or title; Japanese: common surnames plus a given
  name before an honorific or particle; Korean: a surname syllable plus two syllables before 님/씨.
* Arabic: a common given name followed by another word, or two words after a word for customer
  or Mr/Mrs; Devanagari: two words after a word for customer or Mr/Mrs.
"""

from __future__ import annotations

import functools
import re

FIRST_NAMES = frozenset("""
aaron abdul adam adrian ahmed aisha akira alejandro alex alexander alexandra alice alicia amanda amara
amelia amir amit ana andrea andreas andrew angela anna anne antonio arjun aryan ashley ayesha beatriz
benjamin camila carlos carmen caroline catherine charles charlotte chen chloe chloé christian christina
christopher claire clara daniel daniela david deepak diana diego dmitri dmitry elena elif elizabeth emily
emma emre erik fatima fatma felix fernando francesca francesco françois gabriel george giorgos giovanni
giulia hannah hans hassan helen hiroshi hugo ibrahim ingrid isabel isabella ivan jacob james jan jana
javier jennifer jessica joão john jonas jorge josé joseph juan julia julian karim karen kate katherine
kenji kevin klaus laura lauren lea leila leon li liam lina lisa lucas lucia luis luka lukas maria marie
mariam marco marta martin mateo matthew mehmet mei michael michelle miguel mohamed mohammed muhammad nadia
natalia nicolas nikolai noah nora olga oliver olivia omar oscar pablo paolo patricia paul pedro peter
pierre priya rafael rahul rajesh ravi rebecca ricardo robert roberto ryan sara sarah sebastian sergei
sergey sofia sophia sophie stefan stephanie sven thomas tomasz valentina victor wei william xavier
yasmin yuki yusuf zeynep zhang olumide oluwaseun ngozi chinedu kwame amina siobhan ahmad ali fatemeh
reza hamid layla noura khalid youssef sakura haruto yui ren minjun seojun jiwoo ananya rohan sunita
vikram lars nils astrid björn magnus freya kai mila noemi ines joana rui tiago afonso bruno thiago
""".split())

# Words the small model tags as PERSON/LOCATION in technical text. Lowercased.
NER_STOPWORDS = frozenset(
    """
    assistant user system tool claude hermes gpt chatgpt openai anthropic gemini llama mistral qwen
    deepseek copilot python rust java javascript typescript golang kotlin swift ruby perl bash zsh
    linux ubuntu debian windows macos docker kubernetes git github gitlab bitbucket jira slack
    postgres postgresql mysql sqlite redis kafka nginx apache flask django fastapi pydantic numpy
    pandas pytest langgraph langchain presidio spacy json yaml toml html css http https api sdk cli
    readme todo fixme nan none null true false ok error warning info debug regex lambda
    world there team all everyone everybody folks guys friends sir madam again both
    react vue angular svelte node nodejs deno bun npm yarn pnpm pip conda poetry webpack vite babel
    jenkins travis circleci buildkite terraform ansible helm aws azure gcp heroku vercel netlify
    merge fix bump add update refactor revert release build deploy test tests lint format chore feat
    main master develop origin head upstream stash rebase commit push pull checkout branch tag
    chrome firefox safari edge android ios iphone ipad mac xcode vscode vim emacs intellij
    openapi swagger graphql grpc rest oauth saml ldap kafka rabbitmq celery airflow spark hadoop
    tensorflow pytorch keras jax sklearn scikit transformers huggingface ollama vllm
    monday tuesday wednesday thursday friday saturday sunday january february march april may june
    july august september october november december today tomorrow yesterday
    """.split()
)


# Words after a given name that show it is not a person ("Victoria Station", "Lincoln Center").
_NOT_SURNAME = frozenset("""
the a an and or of to in on at for with from by as is are was were be been will would can could should
may might must has have had do does did not no yes it its this that these those there here then than so
if but who what when where why how which all any some each every our your their his her my me you we
they he she him them us station street square park center centre road avenue stadium model cross
bridge hall tower airport hotel hospital university college school bank cafe bakery group inc ltd
please thanks asked said says wants cannot can't will wrote reported confirmed approved
""".split())
_VERBS = r"(?:lives|lived|said|says|asked|asks|wants|wanted|is|was|has|had|will|approved|reported|joined|confirmed|called|wrote|replied|sent)"
_LATIN_WORD = r"[A-Za-zÀ-ÖØ-öø-ÿĀ-žƀ-ɏḀ-ỿ'’-]{2,}"
# A look-ahead so that matches overlap: "customer maria gonzalez" must try "maria gonzalez" too.
# Nguyen with one more word or more; the shorter surnames (Le, Vo, Bui: also words of other languages,
# "Le Monde") with the two more that a Vietnamese full name has
_VIET = re.compile(r"\bNguy[eễ]n(?:\s+[A-ZĐ][a-zà-ỹ]+){1,3}\b"
                   r"|\b(?:Tr[aầ]n|L[eê]|Ph[aạ]m|Ho[aà]ng|Hu[yỳ]nh|V[oõ]|Đặng|B[uù]i|Đỗ)(?:\s+[A-ZĐ][a-zà-ỹ]+){2,3}\b"
                   r"|\b(?:nguy[eễ]n(?:\s+[a-zđà-ỹ]{2,}){1,3}|NGUY[EỄ]N(?:\s+[A-ZĐÀ-Ỹ]{2,}){1,3})\b"
                   r"|\b(?i:tr[aầ]n|l[eê]|ph[aạ]m|ho[aà]ng|hu[yỳ]nh|v[oõ]|b[uù]i)\s+(?i:v[aă]n|th[iị]|đức|duc|minh|ng[oọ]c|"
                   r"thanh|quang|h[uữ]u|xu[aâ]n|kim|anh)(?:\s+[^\W\d_]{2,}){1,2}\b")
_CYRILLIC = re.compile(r"(?<![\w])(?=([А-ЯЁ][а-яё]+(?:-[А-ЯЁ][а-яё]+)?)\s+([А-ЯЁ][а-яё]+))")
_GREEK = re.compile(r"(?<![\w])(?=([Α-ΩΆ-Ώ][α-ωά-ώ]+)\s+([Α-ΩΆ-Ώ][α-ωά-ώ]+))")
_CN_SURNAMES = "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏魏吕丁任沈姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃武戴莫孔向汤"
_CN = re.compile(
    r"(?:(?<=客户)|(?<=用户)|(?<=联系)|(?<=负责人：)|(?<=负责人:)|(?<=负责人)|(?<=同事)|(?<=经理)|(?<=by )|(?<=from )"
    r"|(?<=to )|(?<=通知)|(?<=请)|(?<=由)|(?<=和)|(?<=与))"
    r"([" + _CN_SURNAMES + r"][\u4e00-\u9fff]{1,2}?)(?=说|确认|的|在|是|了|来|去|先生|女士|小姐|老师|，|。|、|：|:|\s|$)"
)
_JP = re.compile(r"(?:田中|佐藤|鈴木|高橋|渡辺|伊藤|山本|中村|小林|加藤|吉田|山田|佐々木|山口|松本|井上|木村|林|斎藤|清水)"
                 r"[\u4e00-\u9fff\u3040-\u309f]{1,3}?(?=様|さん|氏|君|です|は|が|の|から|。|、|\s|$)")
_KO = re.compile(r"(?<![가-힣])[김이박최정강조윤장임한오서신권황안송류전홍][가-힣]{2}(?=\s?(?:님|씨|에게|께))")
_AR_GIVEN = ("محمد|أحمد|احمد|علي|فاطمة|عائشة|خالد|عمر|يوسف|مريم|حسن|حسين|إبراهيم|ابراهيم|عبدالله|عبد الله|نور|"
             "سارة|ليلى|زينب|مصطفى|محمود|سلمان|ريم|هند|طارق|كريم|ياسمين")
_AR = re.compile(r"(?<![\u0600-\u06ff])(?:" + _AR_GIVEN + r")\s+[\u0600-\u06ff]{2,}")
_AR_CUE = re.compile(r"(?:العميل|العميلة|السيد|السيدة|الأستاذ|الأستاذة|الدكتور|الدكتورة)\s+([\u0600-\u06ff]{2,}\s+[\u0600-\u06ff]{2,})")
_HI_CUE = re.compile(r"(?:ग्राहक|श्री|श्रीमती|सुश्री|डॉ\.?)\s+([\u0900-\u097f]+\s+[\u0900-\u097f]+)")

Found = list[tuple[int, int, float]]


# ------------------------------------------------------------------------ lower-case names by context
# The English word list of the installed spaCy pipeline's lemmatizer (WordNet's index, 83 k words):
# a lower-case word after a person cue ("ping tobias", "customer kofi") is a name when it is not an
# English word. Only the table is read (no pipeline is loaded), so pattern mode can use it too.
_VOCAB: frozenset[str] | None = None
_LEMMAS: dict[str, frozenset[str]] = {}  # part of speech -> WordNet lemmas
_RULES: list[tuple[str, str, str]] = []  # (suffix, replacement, part of speech): the lemmatizer's rules


def english_words() -> frozenset[str]:
    """WordNet's lemmas, their irregular forms (``went``, ``children``) and English function words
    (``itself``, ``whose``). Regular inflections are checked by ``english_word``."""
    global _VOCAB
    if _VOCAB is None:
        _VOCAB = _load_vocab()
    return _VOCAB


@functools.lru_cache(maxsize=65536)
def english_word(word: str) -> bool:
    """An English word, inflected or not (``answered``, ``misses``, ``typed`` by the lemmatizer's own
    suffix rules): what a name is not, unless a lexicon says it is also a name."""
    w = word.casefold()
    if w in english_words():
        return True
    return any(w.endswith(suffix) and w[: len(w) - len(suffix)] + repl in _LEMMAS[pos]
               for suffix, repl, pos in _RULES if len(w) > len(suffix) + 1)


def _load_vocab() -> frozenset[str]:
    try:
        import spacy
        from spacy.lang.en.stop_words import STOP_WORDS
        from spacy.lookups import Lookups
    except ImportError:
        return frozenset()
    from ._engine_models import installed_models

    for model in installed_models():
        path = spacy.util.get_package_path(model) if spacy.util.is_package(model) else None
        if path is None:
            continue
        for candidate in path.glob("**/lemmatizer/lookups/lookups.bin"):
            lookups = Lookups().from_disk(candidate.parent)
            index, exc = lookups.get_table("lemma_index"), lookups.get_table("lemma_exc")
            rules = lookups.get_table("lemma_rules")
            words: set[str] = set(STOP_WORDS)
            for pos in index:
                lemmas = frozenset(w for w in index[pos] if "_" not in w)
                _LEMMAS[str(pos)] = lemmas
                words |= lemmas
                words.update(form for form in exc.get(pos, {}) if "_" not in form)
                _RULES.extend((suffix, repl, str(pos)) for suffix, repl in rules.get(pos, []) if suffix)
            return frozenset(words)
    return frozenset()


# Words that introduce a person (what follows them is a name when it is no English word).
_CUES = (r"customer|client|user|contact|tell|ask|asked|ping|pinged|cc|hey|hi|hello|thanks|thank\s+you|dear|"
         r"by|from|with|to|assign(?:ed)?\s+to|spoke\s+with|talk\s+to|talked\s+to|call|called|email|emailed|"
         r"message|dm|cc:|from:|to:|owner:?|reviewer:?|author:?|assignee:?|@|on")
_LOWER = r"[a-zà-öø-ÿā-žƀ-ɏḁ-ỿ]"
_CUE_LOWER = re.compile(r"(?:^|(?<=[\s(\[,;:]))(?P<cue>(?i:" + _CUES + r"))\s+(" + _LOWER + r"[" + _LOWER[1:-1]
                        + r"'’-]{1,24})(?:\s+(" + _LOWER + r"[" + _LOWER[1:-1] + r"'’-]{1,24}))?(?![\w@./])")
# Prepositions say person only weakly: after them technical prose has its own unknown words ("retry
# with backoff", "from pathlib import", "compressed with gzip", "goes to stderr"), so the word must be
# a name the lexicon knows, not merely no English word.
_WEAK_LOWER_CUES = frozenset({"by", "from", "with", "to", "call", "called", "message", "email", "dm",
                              "on"})
# and weaker still ("waiting on lukas", "depends on redis"): a given name that is no English word only
_WEAKER_LOWER_CUES = frozenset({"on"})

# Chat shapes that name a person in lower case: "@priya can you check", "bob and i fixed it", "fatima
# and omar are out", "can ingrid review this?".
_MENTION = re.compile(r"(?<![\w@./-])@(" + _LOWER + r"{2,30})(?![\w./(@-])")
_AND_PRONOUN = re.compile(r"(?<![\w@./-])(" + _LOWER + r"{2,24})\s+and\s+(?:i|me|we)\b")
_AND_NAME = re.compile(r"(?<![\w@./-])(?=(" + _LOWER + r"{2,24})\s+(?:and|&)\s+(" + _LOWER + r"{2,24})(?![\w@./-]))")
_INVERTED = re.compile(r"(?:^|(?<=[.?!]\s)|(?<=\n))(?i:can|could|will|would|should|did|does|is|was|has|have)\s+("
                       + _LOWER + r"{2,24})\s+(?=" + _LOWER + r")")
_LIST_NEXT = re.compile(r"(?:,\s*|\s+(?:and|&)\s+)([^\W\d_][\w'’-]{1,24})(?![\w@./-])")


def _chat_names(text: str) -> Found:
    out: Found = []
    for m in _MENTION.finditer(text):
        if given_name(m.group(1)) and m.group(1) not in _LOWER_STOP:
            out.append((m.start(1), m.end(1), 0.6))
    for m in _AND_PRONOUN.finditer(text):
        if given_name(m.group(1)) and m.group(1) not in _LOWER_STOP | NER_STOPWORDS:
            out.append((m.start(1), m.end(1), 0.6))
    for m in _AND_NAME.finditer(text):
        a, b = m.group(1), m.group(2)
        if given_name(a) and given_name(b) and (plain_given_name(a) or plain_given_name(b)):
            out += [(m.start(1), m.end(1), 0.6), (m.start(2), m.end(2), 0.6)]
    for m in _INVERTED.finditer(text):
        if plain_given_name(m.group(1)):
            out.append((m.start(1), m.end(1), 0.6))
    return out


def _list_continuations(text: str, found: Found) -> Found:
    """"attendees: ravi, sofia, chen": a given name right after a found name, joined by a comma or
    "and", is a name too (one hop at a time, so a list is followed to its end)."""
    out: Found = []
    todo = sorted(found, key=lambda f: f[1])
    seen = {f[1] for f in found}
    while todo:
        _, end, score = todo.pop(0)
        m = _LIST_NEXT.match(text, end)
        if m is None or m.end(1) in seen:
            continue
        word = m.group(1)
        if given_name(word) and word.casefold() not in _LOWER_STOP | NER_STOPWORDS and not \
                (word[:1].isupper() and english_word(word.casefold()) and not plain_given_name(word)):
            span = (m.start(1), m.end(1), score)
            out.append(span)
            seen.add(m.end(1))
            todo.append(span)
    return out
# A sentence that starts with a lower-case word and then a person's verb: "henrike is out today".
_START_LOWER = re.compile(r"(?:^|(?<=[.!?]\s)|(?<=\n))([a-zà-ÿ][a-zà-ÿ'’-]{1,23}[a-zà-ÿ])\s+(?=(?:is|was|says|said|asked|wants|"
                          r"approved|reported|thinks|will|can|cannot|can't|isn't|wasn't|has|had|joined|left|"
                          r"confirmed|replied|wrote|sent|needs|agreed)\b)")


def unknown_word(word: str) -> bool:
    """A given name, or a word that is no English word (nor a stop word): what a name can be."""
    w = word.casefold()
    if w in FIRST_NAMES:
        return True
    if w in _NOT_SURNAME or w in _LOWER_STOP or len(w) < 3:
        return False
    return bool(english_words()) and not english_word(w)


_LOWER_STOP = frozenset("""
i me my we us our you your he him his she her it its they them their this that these those here there
everyone everybody someone anyone team all both again also just now then today tomorrow yesterday
ok okay yes no not please thanks sure asap pr prs ci cd qa ops devops admin root sudo me
""".split())


def lower_case_names(text: str) -> Found:
    """Lower-case names after a cue, or starting a sentence before a person's verb."""
    if not any(c.islower() for c in text):
        return []
    out: Found = []
    pos = 0
    while (m := _CUE_LOWER.search(text, pos)) is not None:
        pos = m.start(2)  # overlapping: in "call with dmitri" the cue "with" follows the cue "call"
        first, second = m.group(2), m.group(3)
        if first.casefold() in NER_STOPWORDS or not unknown_word(first):
            continue
        cue = m.group("cue").casefold()
        if cue in _WEAK_LOWER_CUES and not name_word(first):
            continue
        if cue in _WEAKER_LOWER_CUES and not plain_given_name(first):
            continue
        end = m.end(2)
        if second and second.casefold() not in NER_STOPWORDS and unknown_word(second):
            end = m.end(3)
        out.append((m.start(2), end, 0.6))
    out += _chat_names(text)
    for m in _START_LOWER.finditer(text):
        word = m.group(1)
        # a sentence opened by a lower-case word names a person ("henrike is out") or, as often in
        # technical prose, a package or a tool ("replaykit has", "hermes-agent is"): a lexicon name only
        if word.casefold() not in NER_STOPWORDS and unknown_word(word) and name_word(word) and "-" not in word:
            out.append((m.start(1), m.end(1), 0.6))
    return out


# ------------------------------------------------------------------------ names by lexicon, any case
# Faker's given names and surnames (``_lexicon``) with the built-in list as a floor. A given name that
# is also an English word ("rachel", "bob", "mark") is weak evidence; one that is not ("sergei",
# "ingrid") is strong. A pair is a name when the evidence of both words and of the context adds up.
_GIVEN: frozenset[str] | None = None
_SURNAMES: frozenset[str] = frozenset()
_FUNCTION: frozenset[str] = frozenset()


def _lexicon_sets() -> frozenset[str]:
    global _GIVEN, _SURNAMES, _FUNCTION
    if _GIVEN is None:
        from ._lexicon import lexicon

        lex = lexicon()
        try:
            from spacy.lang.en.stop_words import STOP_WORDS as english_stop
        except ImportError:
            english_stop = set()
        _FUNCTION = frozenset(english_stop) | _NOT_SURNAME | _LOWER_STOP | NER_STOPWORDS | _FOREIGN_STOP
        _SURNAMES = frozenset(w for w in lex.surnames if w not in _FUNCTION)
        # a given name that is also an English word must be a given name in several countries' lists
        # ("rachel", "bob", "mark"); one locale's list holding "media" or "price" is not enough
        _GIVEN = frozenset(w for w in lex.latin_given() | FIRST_NAMES if w not in _FUNCTION and
                           (w in FIRST_NAMES or lex.given_locales.get(w, 0) >= _LOCALES_FOR_A_WORD or
                            not english_word(w)))
    return _GIVEN


_LOCALES_FOR_A_WORD = 3


def given_name(word: str) -> bool:
    return word.casefold().replace("’", "'") in _lexicon_sets()


def name_word(word: str) -> bool:
    """A given name or a surname of the lexicon (``Reyes``, ``O'Neill``), in any case."""
    w = word.casefold().replace("’", "'").strip(".,")
    return w in _lexicon_sets() or w in _SURNAMES or bool(_SURNAME_SHAPE.search(w))


def plain_given_name(word: str) -> bool:
    """A given name that is no English word: strong evidence on its own."""
    w = word.casefold()
    return given_name(w) and (w in FIRST_NAMES or not english_word(w))


# Surname shapes of many languages: -berg, -sson, -ez, -ski, -ova, -enko, -escu, -ini, Mc-, O'-.
_SURNAME_SHAPE = re.compile(r"(?:^(?:mc|mac|o['’]|fitz)[a-z]{3,}|[a-zà-ÿ]{3,}(?:berg|burg|stein|sson|son|sen|ez|ski|ska"
                            r"|sky|wicz|czyk|ova|ová|ov|ev|enko|chuk|yan|escu|elli|etti|ini|oglu|oğlu|ović|vić))$")


def _surname_evidence(word: str) -> int:
    """2: a surname by shape, or a listed surname that is no English word (``ohlsson``); 1: an
    unknown word, or a listed surname that is also a word (``reyes``, ``hill``); 0: a word; -1: a
    function word or a thing (``Street``, ``Server``)."""
    w = word.casefold().replace("’", "'")
    if w in _FUNCTION or w in _THING:
        return -1
    _lexicon_sets()
    english = english_word(w)
    if _SURNAME_SHAPE.search(w) or (not english and w in _SURNAMES):
        return 2
    return 1 if (w in _SURNAMES or (not english and len(w) >= 3)) else 0


# What follows a capitalised word when it is a place or a thing, not a surname.
_THING = frozenset("""
street road avenue lane drive way boulevard square park station center centre stadium bridge hall tower
airport hotel hospital university college school bank cafe office warehouse depot hub branch region
server client service services dashboard api app apps cloud platform team teams project group lab labs
""".split())
_CASE_PREFIX = re.compile(r"^(?:Mc|Mac|O['’]|D['’])(?=[A-Z])")


def _style(word: str) -> str:
    if word.islower():
        return "lower"
    if word.isupper():
        return "upper"
    rest = _CASE_PREFIX.sub("", word)
    parts = re.split(r"['’-]", rest)
    return "title" if all(p[:1].isupper() and (len(p) == 1 or p[1:].islower()) for p in parts if p) else "mixed"


# A person is named right after these ("ping bob", "thanks RACHEL GOLDBERG", "customer sergei"),
# and right before these ("bob says", "Jonathan Reyes approved").
_HONORIFIC = re.compile(r"(?i:\b(?:mr|mrs|ms|miss|mx|dr|prof|herr|frau|mme|mlle|sr|sra|señor|señora|sig|signora)\.?)\s+$")
_STRONG_CUE = re.compile(r"(?i:\b(?:my\s+name\s+is|name\s*:|i\s+am|i'm|call\s+me|regards,?|cheers,?|dear|hi|hello|hey|thanks|thank\s+you|thx|ping|pinged|cc|"
                         r"ask|asked|tell|told|customer|client|user|contact|colleague|spoke\s+with|talked?\s+to|"
                         r"met\s+with|signed\s+off\s+by|opened\s+by|assigned\s+to|escalate\s+to|according\s+to|said|attendees|participants|present|refund\s+for|forward(?:ed)?\s+"
                         r"(?:\S+\s+){0,3}to|named|owner|reviewer|author|assignee|contact\s+person)\.?:?,?(?:\s+(?:is|was))?|@"
                         r"|(?:^|\n)\s*(?:--|—|–))\s*$")
_WEAK_CUE = re.compile(r"(?i:\b(?:by|from|with|to|and|called)),?\s+$")
# what a person does (what a thing does too, "is", "has", "will", counts only as weak evidence)
_PERSON_AFTER = re.compile(r"(?i),?\s*(?:\([^)]{0,60}\)\s*)?(?:(?:already|just|also|still|never|finally|probably)\s+)?"
                           r"(?:said|says|asked|asks|wants|wanted|approved|reported|reports|"
                           r"joined|confirmed|wrote|replied|thinks|agreed|declined|requested|mentioned|signed|prefers|"
                           r"emailed|phoned|called|complained|promised|owns|cannot|can't|won't|doesn't|didn't)\b"
                           r"|(?i:\s+(?:already|just|also|finally|probably)\s+(?:fixed|merged|pushed|deployed|reviewed|"
                           r"sent|closed|answered|replied|left|paid|did|made|took|told))\b")
# A chat line's speaker: "maria: the dashboard is fine now" (a given name alone, then a colon)
_SPEAKER_AFTER = re.compile(r":\s")
_POSSESSIVE = re.compile(r"['’]s$")
_PAREN_AFTER = re.compile(r"(?i)\s*\(|\s+(?:is|was|has|had|will|would|lives|lived)\b")
# A word, not glued to code: "len(" and "`meta`" are not prose.
_WORDS = re.compile(r"(?<![\w@./`-])[^\W\d_][\w'’-]*(?![\w@/`(-])")


def _context(text: str, start: int, end: int) -> int:
    """2: a person's cue before or a person's verb after; 1: ``by``/``with``/``to`` before, a
    parenthesis or a possessive after; 0: nothing says person."""
    before = text[max(0, start - 40):start]
    if _STRONG_CUE.search(before) or _HONORIFIC.search(before) or _PERSON_AFTER.match(text, end):
        return 2
    return int(bool(_WEAK_CUE.search(before) or _PAREN_AFTER.match(text, end) or _OWNER_AFTER.match(text, end)))


_OWNER_AFTER = re.compile(r"['’]s\s")


def _latin(text: str) -> Found:
    given = _lexicon_sets()
    words = list(_WORDS.finditer(text))
    out: Found = []
    for i, m in enumerate(words):
        first = m.group()
        possessive = _POSSESSIVE.search(first)
        if possessive and first[:possessive.start()].casefold() in given:  # "Bob's ticket", "ingrid's laptop"
            base = first[:possessive.start()]
            if _style(base) == "title" or (base.islower() and plain_given_name(base)):
                out.append((m.start(), m.start() + possessive.start(), 0.6))
            continue
        if first.casefold().replace("’", "'") not in given or (style := _style(first)) == "mixed":
            continue
        strong = 2 if plain_given_name(first) else 1
        nxt = words[i + 1] if i + 1 < len(words) else None
        surname = nxt.group() if nxt is not None else ""
        owner = _POSSESSIVE.search(surname)
        if owner:  # "Siobhan Kavanagh's laptop": the name without its 's
            surname = surname[:owner.start()]
        if nxt is not None and text[m.end():nxt.start()] == " " and surname and _style(surname) == style:
            second = _surname_evidence(surname)
            end = nxt.start() + len(surname)
            third = words[i + 2] if i + 2 < len(words) and not owner else None
            if third is not None and text[nxt.end():third.start()] == " " and _style(third.group()) == style \
                    and (_surname_evidence(third.group()) >= 2 or third.group().casefold() in _SURNAMES):
                end = third.end()  # "Mei Lin Chen", "Ana Lucia Oliveira"
            context = _context(text, m.start(), end)
            if style == "title":
                # "Jonathan Reyes": a given name and a listed surname, capitalised ("London Heathrow" is not)
                proper = nxt.group().casefold() in _SURNAMES
                ok = second >= 0 and (strong + second >= 3 or (strong + second >= 2 and (proper or context > 0)))
            else:  # lower case and capitals: prose words and constants look like this too
                ok = (strong == 2 and second == 2) or (second >= 1 and strong + second >= 3 and context >= 1) or \
                    (second >= 1 and strong + second >= 2 and context == 2)
            if ok:
                out.append((m.start(), end, 0.7))
                continue
        if style == "upper":
            continue  # a lone shouted word is a log level or a constant more often than a name
        if strong == 2:  # "Ingrid said", "with Ingrid", "ping ingrid", "maria: it works now"
            ok = _context(text, m.start(), m.end()) >= (1 if style == "title" else 2) or \
                (_SPEAKER_AFTER.match(text, m.end()) is not None and _line_start(text, m.start()))
        else:  # "ping bob", "bob says ...": a given name that is also a word needs a person's cue
            ok = bool(_STRONG_CUE.search(text[max(0, m.start() - 40):m.start()])) or \
                _person_sentence_start(text, m.start(), m.end())
        if ok:
            out.append((m.start(), m.end(), 0.6))
    return out + _after_honorific(text) + _after_role_cue(text)


# A short honorific in lower case needs its period ("dr. okonkwo"): "60 ms best of 40" is no "Ms Best".
_HONORIFIC_WORD = re.compile(r"\b(?:(?i:mr|mrs|ms|miss|mx|dr|prof|sr|sra|sig)\.|(?:Mr|Mrs|Ms|Miss|Mx|Dr|Prof|Sr|Sra|Pan)\b"
                             r"|(?i:herr|frau|mme|mlle|madame|monsieur|señor|señora|senhor|senhora|signor|signora|pani)\b)"
                             r"\s+((?:Mc|Mac|O['’]|D['’])?[^\W\d_][^\W\d_]+(?:-[^\W\d_]+)?)(?![\w@/-])")


def _after_honorific(text: str) -> Found:
    """``Dr. Okafor``, ``Mr. Brown``: a surname after an honorific (``Dr. Pepper`` is a word)."""
    out: Found = []
    for m in _HONORIFIC_WORD.finditer(text):
        w = m.group(1).casefold().replace("’", "'")
        if m.group(1).islower() and m.group(0)[:1].isupper():
            continue  # "Dr. who", a capitalised honorific before a lower-case word: prose
        if _surname_evidence(w) >= 1 or plain_given_name(w):
            out.append((m.start(1), m.end(1), 0.65))
    return out


# A greeting, a sign-off or a role label names a person next ("Thanks, Priyanka", "Signed, Olamide
# Adeyemi", "Applicant: Zanele Dlamini"): there a capitalised word the lexicon does not know is a name
# when it is no English word either (which keeps "Hi Team", "Owner: Platform", "Thanks, Everyone"); after
# a label, only two such words are ("Client: Postman", "Customer: Contoso" are products and companies).
_ROLE_CUE = re.compile(
    # a sign-off takes its comma ("Cheers, Priyanka"; "best Kafka settings" is prose), a greeting need not
    r"(?i:\b(?:(?P<greeting>(?:hi|hello|hey|dear)(?:\s*[,:]\s*|\s+)|(?:thanks|thank\s+you|cheers|regards|best|signed|"
    r"sincerely)\s*[,:\n]\s*)|(?:applicant|patient|passenger|guest|tenant|employee|student|candidate|customer|client|"
    r"caller|contact|assignee|reviewer|attendee|customer\s+name|full\s+name|name)(?:\s*[,:]\s*|\s+)))"
    r"((?:Mc|Mac|O['’])?[A-Z][a-zà-ÿ]{2,}(?:-[A-Z][a-zà-ÿ]+)?)"
    r"(?:\s+((?:Mc|Mac|O['’]|Al-)?[A-Z][a-zà-ÿ]{2,}(?:-[A-Z][a-zà-ÿ]+)?))?(?![\w@./-])")


def _after_role_cue(text: str) -> Found:
    out: Found = []
    for m in _ROLE_CUE.finditer(text):
        first, second = m.group(2), m.group(3)
        if not _unknown_title_word(first):
            continue
        pair = bool(second) and _unknown_title_word(second)
        if not pair and not m.group("greeting"):
            continue  # a label before one unknown word names a product as often ("Client: Postman")
        out.append((m.start(2), m.end(3) if pair else m.end(2), 0.6))
    return out


def _unknown_title_word(word: str) -> bool:
    w = word.casefold()
    return w not in _FUNCTION and w not in _THING and not english_word(w)


def _line_start(text: str, start: int) -> bool:
    return not text[:start].strip(" \t") or text[:start].rstrip(" \t")[-1] == "\n"


def _person_sentence_start(text: str, start: int, end: int) -> bool:
    """``bob says the staging db is down``: a lower-case given name opening a sentence before a verb."""
    before = text[:start].rstrip(" ")
    return (not before or before[-1] in ".!?\n") and bool(_START_VERB.match(text, end))


_START_VERB = re.compile(r"\s+(?:is|was|says|said|asked|wants|approved|reported|thinks|will|can|cannot|can't|isn't|"
                         r"wasn't|has|had|joined|left|confirmed|replied|wrote|sent|needs|agreed)\b")


def _script_names(text: str) -> Found:
    out: Found = []
    for rx in (_CYRILLIC, _GREEK):
        for m in rx.finditer(text):
            start, end = m.start(1), m.end(2)
            sentence_start = not text[:start].strip() or text[:start].rstrip()[-1] in ".!?:;\n"
            if sentence_start and re.match(r"\s+[А-ЯЁΑ-ΩΆ-Ώ]", text[end:]):
                continue  # "Клиент Анна Смирнова": the capital of "Клиент" is the sentence's
            out.append((start, end, 0.65))
    for rx in (_JP, _KO, _AR):
        out += [(m.start(), m.end(), 0.65) for m in rx.finditer(text)]
    for rx in (_CN, _AR_CUE, _HI_CUE):
        out += [(m.start(1), m.end(1), 0.65) for m in rx.finditer(text)]
    return out


_HAS_NON_LATIN = re.compile(r"[\u0370-\u03ff\u0400-\u04ff\u0600-\u06ff\u0900-\u097f\u3040-\u30ff\u4e00-\u9fff\uac00-\ud7a3]")


# Any Latin letter (Polish, Turkish, Czech, Vietnamese names); the case of each word is checked in code.
_L = r"[^\W\d_]"
_CAP_PAIR = re.compile(r"(?<![\w@./-])(?=(" + _L + r"+(?:['’-]" + _L + r"+)?)"
                       r"\s(?:(?:van|von|de|da|del|der|di|dos|du|le|la|(?i:ó|ní|nic|mac|ua))\s)?(" + _L + r"+(?:-" + _L + r"+)?)(?![\w@/-]))")
_CAP_WORD = re.compile(r"(?:Mc|Mac|O['’])?[A-ZÀ-ÖØ-ÞĀ-Žƀ-ɏḀ-Ỿ][^\W\d_A-Z]*(?:['’-][A-ZÀ-Þ]?[^\W\d_A-Z]+)?")


_WORD = re.compile(r"[A-Za-zÀ-ÖØ-öø-ÿ]{2,}")
# Function words of the other languages written in Latin script: never part of a name pair.
_FOREIGN_STOP = frozenset("""
der die das den dem des ein eine einen einem meine mein unser unsere und oder nicht ist sind bitte
le la les un une des du et ou est sont pour avec dans sur el los las una unos y o es son para con en
il lo gli uno di che per non het een en van op te san santa são sankt saint bay area
""".split())


def mostly_foreign(text: str) -> bool:
    """Most of the words of ``text`` are no English word: German or French prose, where every noun
    is capitalised or unknown, and the name rules that rest on English words do not apply."""
    words = _WORD.findall(text)
    if len(words) < 3:
        return bool(words) and all(unknown_word(w) and w.casefold() not in FIRST_NAMES for w in words)
    unknown = sum(unknown_word(w) and w.casefold() not in FIRST_NAMES for w in words)
    return unknown * 2 > len(words)


def foreign_name_pairs(text: str) -> Found:
    """Two capitalised words, neither of them an English word (``Fiona McAllister``, ``Tomás
    Ferreira``): a name in any position, in both modes, whatever the model makes of it."""
    out: Found = []
    for m in _CAP_PAIR.finditer(text):
        first, second = m.group(1), m.group(2)
        if not (_CAP_WORD.fullmatch(first) and _CAP_WORD.fullmatch(second)) or first.isupper() or second.isupper():
            out += _uncased_pair(text, m)
            continue
        if unknown_word(first.replace("’", "'")) and unknown_word(second) and \
                not {first.casefold(), second.casefold()} & (_NOT_SURNAME | _FOREIGN_STOP):
            line = text[text.rfind("\n", 0, m.start()) + 1:text.find("\n", m.end()) % (len(text) + 1)]
            # "Opsgenie Webhook" is two unknown words too: one of them must be a name the lexicon knows,
            # or the pair must stand where a person does
            known = name_word(first) or name_word(second) or _context(text, m.start(1), m.end(2)) > 0
            if known and not mostly_foreign(line):
                out.append((m.start(1), m.end(2), 0.65))
    return out


def _uncased_pair(text: str, m: re.Match[str]) -> Found:
    """``chidi okonkwo``, ``CHIDI OKONKWO`` where a person stands ("Dear", "Assigned to:", "said", a
    signature): two words of one case, neither an English word, one a name of the lexicon or shaped
    like a surname. Lower case and capitals are also how code and constants look, so the place must
    say person."""
    first, second = m.group(1), m.group(2)
    if not ((first.islower() and second.islower()) or (first.isupper() and second.isupper())) or \
            len(first) < 3 or len(second) < 3:
        return []
    if not (unknown_word(first) and unknown_word(second)) or \
            {first.casefold(), second.casefold()} & (_NOT_SURNAME | _FOREIGN_STOP | _LOWER_STOP | NER_STOPWORDS):
        return []
    if not (name_word(first) or name_word(second)) or _context(text, m.start(1), m.end(2)) < 2:
        return []
    return [(m.start(1), m.end(2), 0.6)]


def find_names(text: str) -> Found:
    found = _latin(text) + lower_case_names(text) + foreign_name_pairs(text)
    found += [(m.start(), m.end(), 0.65) for m in _VIET.finditer(text)]
    found += _list_continuations(text, found)
    if _HAS_NON_LATIN.search(text):
        from ._script_names import lexicon_script_names

        found += _script_names(text) + lexicon_script_names(text)
    return found
