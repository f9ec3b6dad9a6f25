"""Nothing derived from content stays in the clear where content is off or redacted.

Every RunHeader field is classified in replaykit/core/redaction/_header.py (structure or content); a
field added to the IR later fails here until it is classified. Each content field is given personal
data and every output that promises no content is searched for it: the redacted run (``redact``, and
so training exports, ATIF and HTML of it), the OTel export without ``--include-content``.
"""

from __future__ import annotations

import json

from replaykit.core.redaction import HEADER_FIELDS, content_free_header, redact_run
from replaykit.core.redaction._header import LINEAGE_CONTENT
from replaykit.core.trace import jsonsafe
from replaykit.core.trace.ir import Edit, Lineage, RunHeader
from replaykit.core.trace.run import Run
from replaykit.testing.sample_pii_run import build_support_run

SECRETS = ("Daniel Whitaker", "daniel.whitaker@corp.internal", "415.555.0143", "sk-proj-Zq8w3NfT1xKp0aLm4RvB7yCe9HsD")


def test_every_header_field_is_classified() -> None:
    assert set(HEADER_FIELDS) == set(RunHeader.model_fields), (
        "classify the new RunHeader field(s) in core/redaction/_header.py: "
        f"{sorted(set(RunHeader.model_fields) ^ set(HEADER_FIELDS))}")
    assert set(HEADER_FIELDS.values()) <= {"structure", "content"}
    assert set(LINEAGE_CONTENT) <= set(Lineage.model_fields)


def _run() -> Run:
    base = build_support_run()
    header = base.header.model_copy(update={
        "title": f"Hi, I'm {SECRETS[0]} ({SECRETS[1]}), call {SECRETS[2]}",
        "base_url": f"https://proxy.example/v1?api_key={SECRETS[3]}",
        "metadata": {"note": f"customer {SECRETS[0]}", "api_key": SECRETS[3]},
        "lineage": Lineage(relation="branch", parent_run_id="support-0", parent_step=1,
                           edit=Edit(target="response", step=1, value=f"Dear {SECRETS[0]}"),
                           details={"why": f"mail {SECRETS[1]}"}),
    })
    return Run(header, base.events)


def _leaks(text: str) -> list[str]:
    return [s for s in (*SECRETS, "whitaker") if s.lower() in text.lower()]


def test_every_content_field_holds_the_planted_values() -> None:
    run = _run()  # the test can fail: the raw header has every value
    raw = json.dumps(jsonsafe.model_data(run.header))
    assert set(_leaks(raw)) >= set(SECRETS)
    for name, kind in HEADER_FIELDS.items():
        value = json.dumps(jsonsafe.model_data(run.header).get(name))
        if kind == "structure":
            assert not _leaks(value), name


def test_content_free_header_drops_every_content_field_and_keeps_structure() -> None:
    header = _run().header
    free = content_free_header(header)
    assert not _leaks(json.dumps(jsonsafe.model_data(free)))
    for name, kind in HEADER_FIELDS.items():
        if kind == "structure":
            assert getattr(free, name) == getattr(header, name), name
    assert free.lineage is not None and free.lineage.parent_run_id == "support-0"


def test_a_redacted_run_has_no_content_in_its_header() -> None:
    red = redact_run(_run(), "patterns")
    assert not _leaks(json.dumps(jsonsafe.model_data(red.header))), red.header
    assert red.header.title and "<PERSON_" in red.header.title  # redacted, not dropped
    assert red.header.lineage is not None and red.header.lineage.relation == "redaction"


def test_exports_of_a_redacted_run_carry_no_header_content() -> None:
    from replaykit.exporters import atif, html_report

    red = redact_run(_run(), "patterns")
    assert not _leaks(json.dumps(atif.render(red).document if hasattr(atif.render(red), "document")
                                 else atif.render(red), default=str))
    assert not _leaks(html_report.render_run(red))


def test_otel_without_content_leaves_the_header_content_out() -> None:
    from replaykit.exporters import otel

    run = _run()
    without = json.dumps(otel.render(run).document)
    assert not _leaks(without)
    header_attr = [a for a in _attributes(otel.render(run).document) if a["key"] == "replaykit.header"]
    assert header_attr and '"run_id"' in header_attr[0]["value"]["stringValue"]
    assert SECRETS[0] in json.dumps(otel.render(run, include_content=True).document)  # opt-in keeps it


def _attributes(doc: dict) -> list[dict]:
    return [a for rs in doc["resourceSpans"] for ss in rs["scopeSpans"] for span in ss["spans"]
            for a in span["attributes"]]
