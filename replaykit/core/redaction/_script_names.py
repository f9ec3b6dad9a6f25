"""Names in other scripts, found by the lexicon (``_lexicon``: Faker's names in their own scripts) in
the positions a name takes there. ``_names`` keeps the rules that need no lexicon.

* Cyrillic, Greek: a capitalised given name or surname of the lexicon that does not open a sentence
  (``Меня зовут Ольга``, ``спасибо, Дмитрий``); capitals mid-sentence are proper nouns there.
* Chinese: a surname of the lexicon and a one- or two-character given name between name boundaries:
  after a cue (联系, 感谢, 叫, 客户：, 负责人, ...) or a sentence boundary, and before a cue (说, 先生,
  女士, 负责, 的, ，, 。...); the given name must be in the lexicon unless a title (先生, 女士) follows.
* Korean: a surname syllable and a two-syllable given name of the lexicon, as a word of its own
  (particles 가, 는, 님, 씨, ... may follow).
* Arabic: a given name of the lexicon after a cue (يا, اسمي, شكرا, مع, السيد, ...), with the next word
  when it is a surname of the lexicon or a family name in ال.
* Devanagari: a given name of the lexicon followed by a surname of the lexicon, by जी, or by a
  ने (who did it: "प्रिया ने कहा"), or after नाम / श्री.
"""

from __future__ import annotations

import re

from ._lexicon import lexicon

Found = list[tuple[int, int, float]]

_SETS: dict[str, frozenset[str]] | None = None


def _sets() -> dict[str, frozenset[str]]:
    global _SETS, _CN_FIRST, _CN_GIVEN_CHARS
    if _SETS is None:
        lex = lexicon()
        words = lex.given | lex.surnames

        def of(pool: frozenset[str], pattern: str) -> frozenset[str]:
            return lex.in_script(pool, pattern)

        _SETS = {
            "cyrillic": of(words, r"[\u0400-\u04ff'-]+"),
            "greek": of(words, r"[\u0370-\u03ff\u1f00-\u1fff-]+"),
            "cn_given": of(lex.given, r"[\u4e00-\u9fff]{1,2}"),
            "cn_surname": of(lex.surnames, r"[\u4e00-\u9fff]{1,2}"),
            "ko_given": of(lex.given, r"[\uac00-\ud7a3]{2}"),
            "ko_surname": of(lex.surnames, r"[\uac00-\ud7a3]"),
            "ar_given": of(lex.given, r"[\u0600-\u06ff]+"),
            "ar_surname": of(lex.surnames, r"[\u0600-\u06ff]+"),
            "hi_given": of(lex.given, r"[\u0900-\u097f]+"),
            "hi_surname": of(lex.surnames, r"[\u0900-\u097f]+"),
        }
    _CN_FIRST = frozenset(w[0] for w in _SETS["cn_surname"])
    _CN_GIVEN_CHARS = frozenset(c for w in _SETS["cn_given"] for c in w) | _CN_COMMON_GIVEN
    return _SETS


_CN_FIRST: frozenset[str] = frozenset()
# characters of the lexicon's given names: a two-character given name the lexicon lacks (俊杰) is still
# made of them, and ordinary words after a surname character (方法, 高速) mostly are not
_CN_GIVEN_CHARS: frozenset[str] = frozenset()
# the characters most often found in Chinese given names (Faker's zh lists lack some, such as 晓)
_CN_COMMON_GIVEN = frozenset(
    "伟芳娜敏静丽强磊军洋勇艳杰娟涛明超秀霞平刚桂英华玉萍红娥玲芬燕晓婷雪慧建国文辉力斌宇浩凯鹏俊帅博欣怡佳琳晨颖倩"
    "思雨梦嘉子轩涵萱泽瑞鑫昊天诗晶莉兰凤梅琴云飞鸿志海波宁峰亮成春秋冬东新荣蕾璐彤瑶薇妍悦宏毅哲翔龙彬松柏伦卫兵"
    "德仁义智忠安康乐福祥贵珍珠美香翠丹青紫")
_CAPITALISED = re.compile(r"(?<![\w-])([А-ЯЁІЇЄҐΑ-ΩΆ-Ώ][а-яёіїєґα-ωά-ώς'-]+)(?![\w-])")


def _alphabetic(text: str, sets: dict[str, frozenset[str]]) -> Found:
    out: Found = []
    for m in _CAPITALISED.finditer(text):
        word = m.group(1).casefold()
        pool = sets["greek"] if "\u0370" <= word[0] <= "\u03ff" else sets["cyrillic"]
        if word not in pool:
            continue
        before = text[:m.start()].rstrip()
        if not before or before[-1] in ".!?:;\n\"«“—-":
            continue  # a capital that opens a sentence says nothing
        out.append((m.start(), m.end(), 0.65))
    return out


_CN_CUES = ("联系人", "联系", "感谢", "谢谢", "叫", "问", "给", "找", "请", "由", "和", "与", "跟", "客户", "用户", "负责人", "经办人",
            "收件人", "申请人", "发件人", "签收人", "审批人",
            "同事", "经理", "通知", "是", "：", ":", "，", "。", "、", "！", "？", " ", "\n", "\t")
_CN_AFTER = re.compile(r"说|先生|女士|小姐|老师|经理|总|确认|负责|已经|已|同意|来电|打来|的|在|是|了|来|去|和|，|。|、|！|？"
                       r"|：|:|\s|$")
_CN_TITLE = re.compile(r"先生|女士|小姐|老师|经理")


def _chinese(text: str, sets: dict[str, frozenset[str]]) -> Found:
    """Every surname of the lexicon at a name boundary is tried (matches overlap: 我叫赵磊 holds 赵磊)."""
    out: Found = []
    surnames, given_names = sets["cn_surname"], sets["cn_given"]
    i, n = 0, len(text)
    while i < n:
        hit = None
        if (i == 0 or text[:i].endswith(_CN_CUES)) and text[i] in _CN_FIRST:
            for cut in (1, 2):
                if text[i:i + cut] not in surnames:
                    continue
                for size in (2, 1):
                    end = i + cut + size
                    given = text[i + cut:end]
                    if end > n or len(given) != size or not all("\u4e00" <= c <= "\u9fff" for c in given):
                        continue
                    if not _CN_AFTER.match(text, end):
                        continue
                    if given in given_names or _CN_TITLE.match(text, end) or \
                            (size == 2 and all(c in _CN_GIVEN_CHARS for c in given)):
                        hit = end
                        break
                if hit:
                    break
        if hit:
            out.append((i, hit, 0.65))
            i = hit
        else:
            i += 1
    return out


_KO = re.compile(r"(?<![\uac00-\ud7a3])([\uac00-\ud7a3])([\uac00-\ud7a3]{2})"
                 r"(?=님|씨|가|이|는|은|을|를|에게|께|의|와|과|도|입니다|이에요|예요|한테|[^\uac00-\ud7a3]|$)")


def _korean(text: str, sets: dict[str, frozenset[str]]) -> Found:
    return [(m.start(), m.end(), 0.65) for m in _KO.finditer(text)
            if m.group(1) in sets["ko_surname"] and m.group(2) in sets["ko_given"]]


_AR_WORD = re.compile(r"[\u0600-\u06ff]+")
_AR_CUE = re.compile(r"(?:^|\s)(?:يا|اسمي|أنا|انا|شكرا|شكراً|مع|السيد|السيدة|العميل|العميلة|الأستاذ|الأستاذة|الدكتور|"
                     r"الدكتورة|الزميل|الزميلة)\s*$")


def _arabic(text: str, sets: dict[str, frozenset[str]]) -> Found:
    out: Found = []
    words = list(_AR_WORD.finditer(text))
    for i, m in enumerate(words):
        if m.group() not in sets["ar_given"] or not _AR_CUE.search(text[max(0, m.start() - 16):m.start()]):
            continue
        end = m.end()
        nxt = words[i + 1] if i + 1 < len(words) else None
        if nxt is not None and text[m.end():nxt.start()] == " " and \
                (nxt.group() in sets["ar_surname"] or nxt.group() in sets["ar_given"] or nxt.group().startswith("ال")):
            end = nxt.end()
        out.append((m.start(), end, 0.65))
    return out


_HI_WORD = re.compile(r"[\u0900-\u097f]+")
_HI_AFTER = frozenset("जी ने".split())  # an honorific, or the mark of who did something ("प्रिया ने कहा")
_HI_CUE = re.compile(r"(?:नाम|श्री|श्रीमती|सुश्री|ग्राहक)\s*$")


def _devanagari(text: str, sets: dict[str, frozenset[str]]) -> Found:
    out: Found = []
    words = list(_HI_WORD.finditer(text))
    for i, m in enumerate(words):
        if m.group() not in sets["hi_given"]:
            continue
        nxt = words[i + 1] if i + 1 < len(words) else None
        if nxt is not None and nxt.group() in sets["hi_surname"]:
            out.append((m.start(), nxt.end(), 0.65))
        elif (nxt is not None and nxt.group() in _HI_AFTER) or _HI_CUE.search(text[max(0, m.start() - 12):m.start()]):
            out.append((m.start(), m.end(), 0.6))
    return out


def lexicon_script_names(text: str) -> Found:
    sets = _sets()
    out = _alphabetic(text, sets) if re.search(r"[\u0370-\u04ff]", text) else []
    if re.search(r"[\u4e00-\u9fff]", text):
        out += _chinese(text, sets)
    if re.search(r"[\uac00-\ud7a3]", text):
        out += _korean(text, sets)
    if re.search(r"[\u0600-\u06ff]", text):
        out += _arabic(text, sets)
    if re.search(r"[\u0900-\u097f]", text):
        out += _devanagari(text, sets)
    return out
