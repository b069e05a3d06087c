"""Tables people bring (VLMEvalKit predictions as .tsv, .csv or .xlsx; worker attributes; study items; C-VQA
source and release tables) are read within `config.table_limits`: a cell longer than
`IMPORT_TABLE_MAX_CELL_CHARS`, more rows than `IMPORT_TABLE_MAX_ROWS` or more than `IMPORT_TABLE_MAX_MB` (an .xlsx
once extracted) is refused naming the file and line, and a file that is no table of its kind (the wrong type, a
damaged workbook, not UTF-8) is a 400 with a message on the API and the pages, never a 500; nothing is written."""

import html
import io
import zipfile

import openpyxl
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotation.crowd import attribute_import
from annotation.crowd.models import Study, WorkerProfile
from annotation.models import BenchmarkVersion, Image
from evaluation import prediction_import_jobs
from evaluation.models import EvaluationRun
from generation.models import Job
from tests.conftest import create_study, logged_in_client, make_user
from tests.request_files import answers_for, kit_version, platform_lines, read_tsv, run_command, write_vlmevalkit

pytestmark = pytest.mark.django_db


@pytest.fixture
def version(image):
    return kit_version(image)


@pytest.fixture
def answers(tmp_path, version) -> dict[str, str]:
    return answers_for(platform_lines(tmp_path))


def as_workbook(tsv_path, name: str = "model_cvqa_k1.xlsx"):
    rows = read_tsv(tsv_path.read_text(encoding="utf-8"))
    header = list(rows[0])
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(header)
    for row in rows:
        sheet.append([row[column] for column in header])
    path = tsv_path.with_name(name)
    book.save(path)
    return path


def stored(path, *, damage_sheet: bool = False) -> bytes:
    """The workbook at `path` rewritten with stored (uncompressed) members, one byte of its sheet flipped when
    `damage_sheet` (the sheet's CRC no longer matches)."""
    source = zipfile.ZipFile(path)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_STORED) as out:
        for member in source.infolist():
            out.writestr(member.filename, source.read(member))
    data = bytearray(buffer.getvalue())
    if damage_sheet:
        sheet = data.index(b"<sheetData>")
        data[sheet + 3] ^= 0x01
    return bytes(data)


def import_command(path):
    return run_command("import_run", "--benchmark", "cvqa", "--version", "k1", "--predictions", str(path),
                       "--model-id", "m")


# --- VLMEvalKit predictions ----------------------------------------------------------------------------------

@pytest.mark.parametrize("suffix", [".tsv", ".xlsx"])
def test_prediction_tables_past_the_limits_are_refused_naming_the_line(tmp_path, version, answers, settings, suffix):
    answers["b1:original"] = "yes " * 1500
    path = write_vlmevalkit(tmp_path, answers)
    path = as_workbook(path) if suffix == ".xlsx" else path
    settings.IMPORT_TABLE_MAX_CELL_CHARS = 5000
    where = "line" if suffix == ".tsv" else "row"
    with pytest.raises(CommandError, match=rf"model_cvqa_k1{suffix} {where} \d+: a cell is longer than the 5,000 "
                                           "characters a cell may hold"):
        import_command(path)
    settings.IMPORT_TABLE_MAX_CELL_CHARS, settings.IMPORT_TABLE_MAX_ROWS = 10_000, 3
    with pytest.raises(CommandError, match=rf"model_cvqa_k1{suffix}: more than 3 rows; split it"):
        import_command(path)
    settings.IMPORT_TABLE_MAX_ROWS, settings.IMPORT_TABLE_MAX_MB = 1000, 0
    with pytest.raises(CommandError, match=rf"model_cvqa_k1{suffix}: .*(at most 0 MB|the limit is 0 bytes)"):
        import_command(path)
    assert not EvaluationRun.objects.exists()
    settings.IMPORT_TABLE_MAX_MB = 1
    import_command(path)
    assert EvaluationRun.objects.get().status == "succeeded"


def no_import_left(media_root) -> bool:
    stored_files = [path for path in (media_root / "exports").rglob("*") if path.is_file()]
    imports = Job.objects.filter(kind=prediction_import_jobs.IMPORT_JOB_KIND)
    return (not EvaluationRun.objects.exists() and not imports.exists()
            and not stored_files)


def test_a_file_that_is_no_table_of_its_kind_is_a_400_on_the_api(tmp_path, version, answers, researcher_api,
                                                                 media_root, settings):
    tsv = write_vlmevalkit(tmp_path, answers)
    workbook = as_workbook(tsv)
    settings.IMPORT_TABLE_MAX_MB = 1
    bomb = openpyxl.Workbook()
    bomb.active.append(["index", "prediction", "padding"])
    for index in range(200):
        bomb.active.append([index, "yes", "x" * 10_000])
    bomb.save(tmp_path / "bomb.xlsx")
    cases = [
        ("preds.xlsx", tsv.read_bytes(), "preds.xlsx: not an .xlsx workbook (not a zip archive"),
        ("preds.xlsx", stored(workbook, damage_sheet=True), "preds.xlsx: not an .xlsx workbook (Bad CRC-32"),
        ("bomb.xlsx", (tmp_path / "bomb.xlsx").read_bytes(), "bomb.xlsx: 2 MB once extracted, where the limit is "
                                                             "1 MB."),
        ("preds.tsv", "index\tprediction\n0\tsì\n".encode("latin-1"), "preds.tsv: not UTF-8 text."),
    ]
    for name, content, message in cases:
        response = researcher_api.post(reverse("api-run-import"), {
            "version": version.pk, "file": SimpleUploadedFile(name, content), "model_id": "m",
            "predictions_format": "vlmevalkit"}, format="multipart")
        assert response.status_code == 400, (name, response.content[:300])
        assert response.json()["error"].startswith(message), response.json()
        assert no_import_left(media_root)
    undamaged = researcher_api.post(reverse("api-run-import"), {
        "version": version.pk, "file": SimpleUploadedFile("preds.xlsx", stored(workbook)), "model_id": "m"},
        format="multipart")
    assert undamaged.status_code == 202


def test_the_page_shows_why_a_workbook_is_refused(tmp_path, version, researcher_client, media_root):
    response = researcher_client.post(reverse("results-version-import", kwargs={"pk": version.pk}), {
        "file": SimpleUploadedFile("preds.xlsx", b"index\tprediction\n0\tyes\n"), "model_id": "m", "fmt": ""})
    assert response.status_code == 400
    assert "Nothing was imported: preds.xlsx: not an .xlsx workbook" in html.unescape(response.content.decode())
    assert no_import_left(media_root)


# --- Worker attributes -------------------------------------------------------------------------------------

def test_worker_attributes_past_the_limits_are_refused_on_the_page_and_the_command(curator, tmp_path, settings):
    profile = WorkerProfile.objects.create(user=make_user("p1"), platform="prolific", platform_worker_id="P1")
    settings.IMPORT_TABLE_MAX_CELL_CHARS = 1000
    long_cell = "Participant id,Age,Note\nP1,30," + "x" * 2000 + "\n"
    client = logged_in_client(curator)
    response = client.post(reverse("crowd-workers-import"), {
        "file": SimpleUploadedFile("export.csv", long_cell.encode()), "platform": "prolific", "mapping": ""})
    assert response.status_code == 400
    assert "The file line 2: a cell is longer than the 1,000 characters a cell may hold." in \
        html.unescape(response.content.decode())
    path = tmp_path / "export.csv"
    path.write_text("Participant id,Age\n" + "".join(f"P{n},30\n" for n in range(5)))
    settings.IMPORT_TABLE_MAX_ROWS = 4
    with pytest.raises(CommandError, match="The file: more than 4 rows; split it."):
        call_command("import_worker_attributes", str(path))
    assert WorkerProfile.objects.get(pk=profile.pk).attributes == {}  # nothing written


def test_an_export_of_many_workers_is_read_in_batches(db):
    """More ids than a database takes as parameters of one query (SQLite: 250,000; PostgreSQL: 65,535)."""
    WorkerProfile.objects.create(user=make_user("p1"), platform="prolific", platform_worker_id="P1")
    text = "Participant id,Age\n" + "".join(f"P{n},30\n" for n in range(260_000))
    report = attribute_import.import_attributes(text.encode())
    assert report.updated == ["P1"] and len(report.unknown_workers) == 259_999
    assert WorkerProfile.objects.get(platform_worker_id="P1").attributes == {"age": 30}


# --- Study items, C-VQA sources ------------------------------------------------------------------------------

FORM = {"fields": [{"name": "answer", "type": "single_choice", "label": "Right?", "options": ["yes", "no"]}]}


def post_items(client, study, name: str, text: str):
    return client.post(reverse("crowd-study-items", args=[study.slug]), {
        "source": "file", "file": SimpleUploadedFile(name, text.encode())})


def test_study_item_tables_are_read_within_the_limits(curator, settings):
    study = create_study("cells", form=FORM, items=0, state=Study.State.DRAFT)
    client = logged_in_client(curator)
    deep = 'external_id,payload\nb,"' + "[" * 200_000 + "]" * 200_000 + '"\n'
    response = post_items(client, study, "items.csv", deep)
    assert response.status_code == 400
    assert response.context["outcome"].problems == [
        {"row": 2, "problem": "payload is not valid JSON (nested more than 128 levels deep)"}]
    response = post_items(client, study, "items.csv", "external_id,caption\nc1,a\x00b\n")
    assert response.status_code == 400
    assert response.context["outcome"].problems == [
        {"row": 2, "problem": "a cell holds a NUL character (is it a text table?)"}]
    settings.IMPORT_TABLE_MAX_CELL_CHARS = 1000
    response = post_items(client, study, "items.csv", "external_id,caption\nc1,short\nc2," + "x" * 1001 + "\n")
    assert response.status_code == 400
    assert response.context["outcome"].problems == [
        {"row": 3, "problem": "a cell is longer than the 1,000 characters a cell may hold"}]
    assert not study.items.exists()
    settings.IMPORT_TABLE_MAX_CELL_CHARS = 8 * 1024 * 1024
    response = post_items(client, study, "items.csv", "external_id,caption\nc1," + "x" * 200_000 + "\n")
    assert response.status_code == 302
    assert len(study.items.get().payload["caption"]) == 200_000


def test_cvqa_source_tables_are_read_within_the_limits(curator_client, astronaut, settings):
    settings.IMPORT_TABLE_MAX_CELL_CHARS = 1000
    for table, message in [
        ("image,question,answer\nastronaut.png,How many?," + "1" * 1001 + "\n",
         "q.csv line 2: a cell is longer than the 1,000 characters a cell may hold"),
        ("image,question,answer\nastronaut.png,How\x00many?,1\n", "q.csv line 2: a cell holds a NUL character"),
    ]:
        response = curator_client.post(reverse("cvqa-sources"), {
            "version": "s", "format": "csv", "table": SimpleUploadedFile("q.csv", table.encode()),
            "images": SimpleUploadedFile("astronaut.png", astronaut.read_bytes())})
        assert response.status_code == 400 and message in html.unescape(response.content.decode())
    assert not BenchmarkVersion.objects.filter(benchmark__slug="cvqa").exists() and not Image.objects.exists()
