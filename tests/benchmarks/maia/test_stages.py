"""A MAIA version under curation cannot be frozen while a question still collects answers or, once
curated, lacks its statements; a draft holds at most 8 answers."""

import pytest

from annotation import versions
from annotation.benchmarks.maia import stages
from annotation.curation_models import CurationRecord
from annotation.models import Benchmark, BenchmarkItem, BenchmarkVersion
from annotation.payloads import validate_payload

pytestmark = pytest.mark.django_db

COMPLETE = {"kind": "question", "video": "v1", "category": "Incertezza_A", "question": "Dove va?",
            "answers": [f"Avanti {n}" for n in range(8)]}


def version_with(*payloads, label: str = "pool") -> BenchmarkVersion:
    version = BenchmarkVersion.objects.create(benchmark=Benchmark.objects.get(slug="maia"), label=label)
    for n, payload in enumerate(payloads):
        BenchmarkItem.objects.create(version=version, external_id=f"q{n}", payload=payload)
    return version


def test_a_draft_holds_at_most_a_pool_of_answers():
    validate_payload("maia", {**COMPLETE, "kind": "question_draft", "answers": []})
    with pytest.raises(Exception, match="at most 8"):
        validate_payload("maia", {**COMPLETE, "kind": "question_draft", "answers": list("abcdefghi")})


def test_a_draft_blocks_freezing():
    version = version_with({**COMPLETE, "kind": "question_draft", "answers": ["uno", "due"]})
    with pytest.raises(versions.FreezeRefused, match="'q0' is not complete: has 2 of its 8 answers"):
        versions.freeze(version)


def test_a_curated_question_needs_its_statements_but_an_imported_one_does_not(curator):
    imported = version_with(COMPLETE)
    assert stages.freeze_check(imported) == []
    curated = version_with(COMPLETE, label="curated")
    CurationRecord.objects.create(item=curated.items.get(), stage=stages.POOL_CHECKED, author=curator)
    assert stages.freeze_check(curated) == [("q0", "has no true and false statements yet")]
    item = curated.items.get()
    item.payload = {**COMPLETE, "true_statements": list("abcdefgh"), "false_statements": list("ijklmnop")}
    item.save()
    assert stages.freeze_check(curated) == []
