"""The annotation layer's benchmark registry and the typed item payloads it carries.

A benchmark is declared once (`annotation/benchmarks/<slug>/`) and every list of benchmarks asks the
registry; a benchmark defined outside the package (here, a toy one in this file) registers the same
way. Payloads are checked against the benchmark's pydantic schema by the service, the items API and
freezing alike, and the schema is published in the OpenAPI document.
"""

import json
from typing import Literal

import pytest
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.core.management.base import CommandError
from drf_spectacular.plumbing import _load_enum_name_overrides

from annotation import versions
from annotation.benchmarks import registry
from annotation.benchmarks.registry import BenchmarkDefinition, Payload, register
from annotation.benchmarks.types import NonEmptyString, one_of
from annotation.bootstrap import ensure_benchmarks
from annotation.exporters import ExportFailed, export_version
from annotation.importers import ImportFailed, import_release
from annotation.importers.base import ItemSpec
from annotation.models import Benchmark, BenchmarkItem, BenchmarkVersion
from annotation.payloads import validate_payload
from tests import hf_support
from tests.conftest import cvqa_payload

pytestmark = pytest.mark.django_db

THE_FIVE = ["blackswan", "cvqa", "cvrr", "maia", "nleye"]


class ToyCaption(Payload):
    kind: Literal["caption"]
    caption: NonEmptyString
    verdict: one_of("true", "false")


class ToyRelease:
    """A release of the toy benchmark: one line per item, `<id>|<caption>|<verdict>`, in `toy.txt`."""

    @staticmethod
    def read(root, problems):
        specs = []
        for line_number, line in enumerate((root / "toy.txt").read_text().splitlines(), start=1):
            external_id, caption, verdict = line.split("|")
            specs.append(ItemSpec(external_id=external_id, where=f"toy.txt line {line_number}",
                                  payload={"kind": "caption", "caption": caption, "verdict": verdict}))
        return specs


class Toy(BenchmarkDefinition):
    slug = "toy"
    name = "Toy captions"
    description = "A sixth benchmark defined outside the package."
    payloads = (ToyCaption,)

    def read(self, root, problems):
        return ToyRelease.read(root, problems)

    def write(self, items, writer):
        writer.write_table("toy.jsonl", [], [{"id": item.external_id, **item.payload} for item in items])


@pytest.fixture
def toy():
    """The toy benchmark registered for one test. drf-spectacular keeps the choice sets of its enum
    names (`ENUM_NAME_OVERRIDES`, the registered benchmarks among them) once read: forgotten on both
    sides, so that a schema made later does not see a stale set of benchmarks."""
    register(Toy)
    _load_enum_name_overrides.cache_clear()
    yield registry.get("toy")
    registry.unregister("toy")
    _load_enum_name_overrides.cache_clear()


# --- The registry -----------------------------------------------------------------------------

def test_the_five_benchmarks_are_discovered_with_their_names():
    assert registry.slugs() == THE_FIVE
    assert dict(registry.choices()) == {"blackswan": "BlackSwanSuite", "cvqa": "C-VQA", "cvrr": "CVRR-ES",
                                        "maia": "MAIA", "nleye": "NL-EYE"}
    assert {kind for definition in registry.all() for kind in definition.kinds} == {
        "video", "mcq", "yn", "real", "synthetic", "source", "triplet", "brief", "qa", "question", "question_draft"}


def test_an_unknown_slug_names_the_known_ones():
    with pytest.raises(KeyError) as raised:
        registry.get("vqa2")
    assert str(raised.value) == "unknown benchmark 'vqa2'; known: blackswan, cvqa, cvrr, maia, nleye"
    with pytest.raises(ImportFailed) as refused:
        import_release("vqa2", "/nowhere", "v1")
    assert refused.value.problems == ["unknown benchmark 'vqa2'; known: blackswan, cvqa, cvrr, maia, nleye"]
    with pytest.raises(ExportFailed, match="unknown benchmark 'vqa2'; known: blackswan, cvqa"):
        export_version("vqa2", "v1", "/nowhere")
    with pytest.raises(CommandError, match="invalid choice: 'vqa2'"):
        call_command("import_benchmark", "vqa2", "/nowhere", "--version", "v1")


def test_the_benchmark_row_must_name_a_registered_benchmark():
    with pytest.raises(ValidationError) as refused:
        Benchmark(slug="vqa2", name="VQA v2").full_clean()
    assert refused.value.message_dict["slug"] == ["unknown benchmark 'vqa2'; known: blackswan, cvqa, cvrr, maia, nleye"]
    Benchmark.objects.get(slug="cvqa").full_clean()


def test_a_second_definition_of_a_slug_is_refused():
    class Impostor(BenchmarkDefinition):
        slug, name, payloads = "cvqa", "Not C-VQA", (ToyCaption,)

    with pytest.raises(ValueError, match="already registered"):
        register(Impostor)
    assert registry.get("cvqa").name == "C-VQA"


def test_ensure_benchmarks_follows_the_registry(toy):
    assert sorted(Benchmark.objects.values_list("slug", flat=True)) == THE_FIVE
    ensure_benchmarks()
    row = Benchmark.objects.get(slug="toy")
    assert (row.name, row.description) == ("Toy captions", "A sixth benchmark defined outside the package.")
    row.full_clean()
    ensure_benchmarks()
    assert Benchmark.objects.filter(slug="toy").count() == 1


def test_a_benchmark_registered_outside_the_package_imports_and_exports(toy, tmp_path, curator):
    ensure_benchmarks()
    release = tmp_path / "release"
    release.mkdir()
    (release / "toy.txt").write_text("t1|A cat sleeps.|true\nt2|A dog flies.|false\n")
    result = import_release("toy", release, "v1", user=curator)
    assert result.items == 2 and result.version.frozen
    assert BenchmarkItem.objects.get(version=result.version, external_id="t2").payload["verdict"] == "false"
    exported = export_version("toy", "v1", tmp_path / "out")
    assert [json.loads(line)["id"] for line in (exported.folder / "toy.jsonl").read_text().splitlines()] == \
        ["t1", "t2"]
    export_version("toy", "v1", tmp_path / "hf", layout="hf")  # the layout every benchmark has
    (config,) = hf_support.checked_card(tmp_path / "hf").values()
    rows = hf_support.load(tmp_path / "hf", cache=tmp_path / "cache", split="test")
    assert (rows["external_id"], rows["caption"], rows["verdict"]) == (
        ["t1", "t2"], ["A cat sleeps.", "A dog flies."], ["true", "false"])
    assert "# Toy captions · v1" in config["text"]
    (release / "toy.txt").write_text("t1|A cat sleeps.|maybe\n")
    with pytest.raises(ImportFailed) as refused:
        import_release("toy", release, "v2", user=curator)
    assert refused.value.problems == ["toy.txt line 1: toy/caption: field 'verdict' must be one of 'true', 'false' "
                                      "(got 'maybe')"]


# --- Typed payloads ---------------------------------------------------------------------------

def test_a_wrong_type_is_refused_with_the_field_named():
    video = {"kind": "video", "id": "v1", "preevent": 0, "event": 1.5, "postevent": 3}
    validate_payload("blackswan", video)
    with pytest.raises(ValidationError) as refused:
        validate_payload("blackswan", {**video, "event": "1.5", "task1_gt": ["only one"], "multivideo": "perhaps"})
    assert refused.value.messages == [
        "blackswan/video: field 'event' must be a number (got '1.5')",
        "blackswan/video: field 'task1_gt' must be a list of 3 texts (got ['only one'])",
        "blackswan/video: field 'multivideo' must be a mark (\"yes\"/\"no\" or true/false) (got 'perhaps')",
    ]
    with pytest.raises(ValidationError) as refused:
        validate_payload("blackswan", {"kind": "mcq", "id": "v1", "mcq_task": 1, "mcq_options": ["a", "b", 3],
                                       "mcq_label": True})
    assert refused.value.messages == ["blackswan/mcq: field 'mcq_options' must be a list of 3 strings "
                                      "(got ['a', 'b', 3])"]
    with pytest.raises(ValidationError) as refused:
        validate_payload("maia", {"kind": "question", "video": "video1", "category": "c", "question": "q",
                                  "answers": list("abcdefgh"), "true_statements": ["only one"]})
    assert refused.value.messages == ["maia/question: field 'true_statements' must list one statement per answer"]
    with pytest.raises(ValidationError, match="The payload must be a JSON object"):
        validate_payload("cvqa", ["kind", "real"])


def test_extra_fields_are_kept_as_sent(curator, draft_version):
    payload = cvqa_payload(note={"from": "a curator", "tags": ["kept", 1]}, source={"file": "x.csv", "line": 2})
    item = versions.add_item(draft_version, "q-1", payload)
    item.refresh_from_db()
    assert item.payload == payload
    item.full_clean()


def test_the_items_api_checks_the_payload_against_its_benchmark(curator_api, draft_version):
    url = f"/api/versions/{draft_version.pk}/items/"
    wrong = curator_api.post(url, {"external_id": "q-1", "payload": cvqa_payload(answer=2)}, format="json")
    assert wrong.status_code == 400
    assert wrong.json()["errors"] == ["cvqa/real: field 'answer' must be a non-empty string (got 2)"]
    assert wrong.json()["payload"] == wrong.json()["errors"]
    other_benchmark = curator_api.post(url, {"external_id": "q-1", "payload": {"kind": "triplet", "premise": "p",
                                                                               "hypothesis1": "a", "hypothesis2": "b",
                                                                               "label": 1}}, format="json")
    assert other_benchmark.status_code == 400
    assert ("cvqa payload needs 'kind', one of: real, source, synthetic (got 'triplet')"
            in other_benchmark.json()["error"])
    assert not BenchmarkItem.objects.filter(version=draft_version).exists()
    extra = curator_api.post(url, {"external_id": "q-1", "payload": cvqa_payload(note="kept")}, format="json")
    assert extra.status_code == 201 and extra.json()["payload"]["note"] == "kept"


def test_freezing_checks_items_written_around_the_service(draft_version):
    BenchmarkItem.objects.create(version=draft_version, external_id="typed", payload=cvqa_payload(type=["direct"]))
    with pytest.raises(ValidationError) as refused:
        versions.freeze(draft_version)
    assert refused.value.messages == ["typed: cvqa/real: field 'type' must be one of 'direct', 'indirect', "
                                      "'boolean' (got ['direct'])"]
    assert not BenchmarkVersion.objects.get(pk=draft_version.pk).frozen


# --- The OpenAPI schema -----------------------------------------------------------------------

def test_the_api_schema_publishes_each_benchmarks_payload_schema(researcher_api, toy):
    schema = researcher_api.get("/api/schema/", {"format": "json"}).json()
    components = schema["components"]["schemas"]
    payload = components["BenchmarkItem"]["properties"]["payload"]
    names = {"blackswan": "BlackswanPayload", "cvqa": "CvqaPayload", "cvrr": "CvrrPayload", "maia": "MaiaPayload",
             "nleye": "NleyePayload", "toy": "ToyPayload"}
    assert [ref["$ref"] for ref in payload["anyOf"]] == [f"#/components/schemas/{names[slug]}"
                                                        for slug in sorted(names)]
    blackswan = components["BlackswanPayload"]
    assert blackswan["discriminator"]["propertyName"] == "kind"
    assert set(blackswan["discriminator"]["mapping"]) == {"video", "mcq", "yn"}
    video = components["BlackSwanVideo"]
    assert {"id", "kind", "preevent", "event", "postevent"} <= set(video["required"])
    assert video["additionalProperties"] is True
    assert video["properties"]["task1_gt"]["minItems"] == video["properties"]["task1_gt"]["maxItems"] == 3
    assert components["CvqaReal"]["properties"]["type"] == {"$ref": "#/components/schemas/CvqaRealTypeEnum"}
    assert components["CvqaRealTypeEnum"]["enum"] == ["direct", "indirect", "boolean"]
    assert set(components["MaiaQuestion"]["required"]) == {"kind", "video", "category", "question", "answers"}
    assert components["ToyCaption"]["properties"]["caption"]["type"] == "string"
    assert components["BenchmarkSlugEnum"]["enum"] == [*THE_FIVE, "toy"]
