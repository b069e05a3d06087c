"""A sixth benchmark needs its three modules and nothing else.

ToyVQA (`tests/toy_annotation.py`, `tests/toy_evaluation.py`, `tests/toy_frontend.py`) is written outside
the benchmark packages and registered the way `discover` registers theirs: by importing its modules. The
test then carries it through the real commands, as a user would: a release folder of real pictures →
`import_benchmark` (a frozen version) → `export_benchmark` → `export_requests` → `evaluate` with a tiny
Qwen2.5-VL → `score --run` and `score --predictions` → the results pages; and a curator opens its own page
from the navigation. Afterwards the registries forget it again (and the database row goes with the test's
transaction).
"""

import importlib
import io
import json
import re
import sys
from importlib import import_module

import pytest
from django.core.management import CommandError, call_command
from django.urls import clear_url_caches, reverse

from annotation.benchmarks import registry
from annotation.bootstrap import ensure_benchmarks
from annotation.models import Benchmark, BenchmarkVersion
from evaluation import benchmarks
from evaluation.models import EvaluationRun, Prediction
from frontend import benchmarks as pages

SLUG = "toyvqa"
MODULES = ("tests.toy_annotation", "tests.toy_evaluation", "tests.toy_frontend")
# id → (sample picture index in `release_fixtures.IMAGES`, question, answer as the release writes it)
QUESTIONS = {
    "horse": (3, "Is there a horse in the picture?", "Yes"),
    "coins": (4, "Is there a cat in the picture?", "no"),
    "camera": (9, "Is there a person in the picture?", "YES"),
}


def read_urls_again():
    """Read the URL modules again, as a restart would, so that `frontend/urls.py` includes the pages of every
    benchmark registered now."""
    for name in ("frontend.urls", "config.urls"):
        importlib.reload(import_module(name))
    clear_url_caches()


def registered_pages() -> set[str]:
    return {found.slug for found in pages.registered()}


@pytest.fixture
def toyvqa(db):
    """ToyVQA registered in every layer (its modules imported, as `discover` imports a benchmark's; the URL
    modules read again) and its `Benchmark` row made as `migrate` makes one per registered benchmark;
    forgotten afterwards."""
    assert SLUG not in registry.slugs() and SLUG not in benchmarks.slugs() and SLUG not in registered_pages()
    for name in MODULES:
        import_module(name)
    read_urls_again()
    ensure_benchmarks()
    yield
    registry.unregister(SLUG)
    benchmarks.unregister(SLUG)
    pages.unregister(SLUG)
    for name in MODULES:
        sys.modules.pop(name, None)
    read_urls_again()
    assert SLUG not in registry.slugs() and SLUG not in benchmarks.slugs() and SLUG not in registered_pages()


@pytest.fixture
def release(tmp_path, media):
    """A ToyVQA release: `questions.jsonl` and three real sample pictures under `images/`."""
    folder = tmp_path / "release"
    (folder / "images").mkdir(parents=True)
    lines = []
    for external_id, (picture, question, answer) in QUESTIONS.items():
        source = media.image(picture)
        image = f"images/{external_id}{source.suffix}"
        (folder / image).write_bytes(source.read_bytes())
        lines.append(json.dumps({"id": external_id, "image": image, "question": question, "answer": answer}))
    (folder / "questions.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def command(name, *args) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command(name, *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def read_lines(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def headline(stdout: str) -> list[str]:
    """The headline row of the toy's main metric: label, value, n, unparsed."""
    row = next(line for line in stdout.splitlines() if line.startswith("Yes/no accuracy"))
    return row.removeprefix("Yes/no accuracy").split()


def test_a_sixth_benchmark_from_two_modules_goes_from_release_to_results_page(
        toyvqa, release, tmp_path, tiny_models_dir, tiny_registry, researcher_client):
    # import → a frozen version with typed payloads and the pictures in the library
    out, _ = command("import_benchmark", SLUG, str(release), "--version", "v1")
    assert "Imported toyvqa:v1: 3 items, 3 media added" in out and "frozen" in out
    version = BenchmarkVersion.objects.get(benchmark__slug=SLUG, label="v1")
    assert version.frozen and version.checksum
    items = {item.external_id: item for item in version.items.prefetch_related("media__image")}
    assert {external_id: item.payload["answer"] for external_id, item in items.items()} == {
        "horse": "yes", "coins": "no", "camera": "yes"}
    assert {link.role for item in items.values() for link in item.media.all()} == {"image"}
    assert items["coins"].media.get().image.checksum != items["horse"].media.get().image.checksum

    # export → the release as it was imported, pictures byte for byte
    exported = tmp_path / "exported"
    command("export_benchmark", SLUG, "--version", "v1", str(exported))
    assert read_lines(exported / "questions.jsonl") == read_lines(release / "questions.jsonl")
    for external_id in QUESTIONS:
        picture = next((release / "images").glob(f"{external_id}.*")).name
        assert (exported / "images" / picture).read_bytes() == (release / "images" / picture).read_bytes()

    # export_requests → one yes/no request per item, with its picture
    requests_file = tmp_path / "requests.jsonl"
    _, err = command("export_requests", "--benchmark", SLUG, "--version", "v1", "--out", str(requests_file))
    assert err.startswith("Wrote 3 requests of 3 items of toyvqa:v1")
    lines = {line["request_id"]: line for line in read_lines(requests_file)}
    assert sorted(lines) == ["camera:yes_no", "coins:yes_no", "horse:yes_no"]
    coins = lines["coins:yes_no"]
    assert (coins["variant"], coins["answer_type"], coins["gold"]) == ("yes_no", "yes_no", "no")
    assert coins["prompt"] == "Is there a cat in the picture?\nAnswer with yes or no."
    assert [(m["role"], m["kind"], m["checksum"]) for m in coins["media"]] == [
        ("image", "image", items["coins"].media.get().image.checksum)]

    # evaluate with a tiny Qwen2.5-VL → a succeeded run and the toy's headline metric
    out, _ = command("evaluate", "--benchmark", SLUG, "--version", "v1", "--model",
                     str(tiny_models_dir / "qwen2-vl"), "--max-new-tokens", "3", "--backend-option", "device=cpu")
    run = EvaluationRun.objects.get(version=version)
    assert run.status == EvaluationRun.Status.SUCCEEDED, run.message
    coins_prediction = Prediction.objects.get(run=run, request_id="coins:yes_no")
    assert Prediction.objects.filter(run=run, error="").count() == 3 and coins_prediction.prompt_tokens
    [message] = coins_prediction.prompt  # the picture, then the question
    assert [(part["type"], part.get("text")) for part in message["content"]] == [
        ("image", None), ("text", "Is there a cat in the picture?\nAnswer with yes or no.")]
    assert headline(out)[-2] == "3"  # n

    # score --run → the same metrics from the stored predictions
    run_metrics = tmp_path / "run-metrics.json"
    out, _ = command("score", "--run", str(run.pk), "--out", str(run_metrics))
    scored = json.loads(run_metrics.read_text())
    assert scored["meta"]["benchmark"] == SLUG and scored["predictions"]["answered"] == 3
    assert scored["yes_no"]["n"] == 3 and set(scored["by_answer"]) == {"yes", "no"}
    assert headline(out)[-2:] == ["3", str(scored["yes_no"]["unparsed"])]

    # score --predictions → accuracy, n and unparsed of answers made outside the platform
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text("\n".join(json.dumps({"request_id": request_id, "response": response}) for request_id,
                                     response in (("horse:yes_no", "Yes."), ("coins:yes_no", "Yes"),
                                                  ("camera:yes_no", "I cannot tell."))) + "\n")
    file_metrics = tmp_path / "file-metrics.json"
    out, _ = command("score", "--benchmark", SLUG, "--version", "v1", "--predictions", str(predictions),
                     "--out", str(file_metrics))
    scored = json.loads(file_metrics.read_text())
    assert {key: scored["yes_no"][key] for key in ("accuracy", "n", "correct", "unparsed")} == {
        "accuracy": 1 / 3, "n": 3, "correct": 1, "unparsed": 1}
    assert {gold: (group["n"], group["correct"]) for gold, group in scored["by_answer"].items()} == {
        "yes": (2, 1), "no": (1, 0)}
    assert headline(out) == ["33.3%", "3", "1"]

    # the results pages: the benchmark in the list, its column and series on the version's leaderboard,
    # every metric of the run, and the requests behind a number
    index = researcher_client.get(reverse("results")).content.decode()
    assert f'data-benchmark="{SLUG}"' in index and ">ToyVQA</a>" in index
    assert f'data-version="{SLUG}:v1"' in index
    board = researcher_client.get(reverse("results-version", args=[version.pk]))
    assert board.status_code == 200
    html = board.content.decode()
    assert "Yes/no accuracy" in html and "Accuracy per gold answer" in html
    drill_url = reverse("results-drill", args=[run.pk, "yes_no.accuracy"])
    assert re.search(rf'<a href="{re.escape(drill_url)}">[^<]+</a>\s*<span class="n">n=3</span>', html)
    page = researcher_client.get(reverse("results-run", args=[run.pk])).content.decode()
    assert 'data-metric="yes_no.accuracy"' in page and 'data-metric="by_answer.no.accuracy"' in page
    body = researcher_client.get(reverse("results-run-json", args=[run.pk])).json()
    assert body["meta"]["benchmark"] == SLUG and body["yes_no"]["n"] == 3
    drilled = researcher_client.get(reverse("results-drill", args=[run.pk, "by_answer.yes.accuracy"]))
    assert re.findall(r'data-request-id="([^"]+)"', drilled.content.decode()) == ["camera:yes_no", "horse:yes_no"]


def test_the_toy_is_refused_where_it_does_not_fit(toyvqa, release, tmp_path):
    """Its payload schema and its reader's checks guard the import like any registered benchmark's."""
    lines = (release / "questions.jsonl").read_text().splitlines()
    broken = json.loads(lines[1]) | {"answer": "maybe"}
    (release / "questions.jsonl").write_text("\n".join([lines[0], json.dumps(broken), lines[0]]) + "\n")
    with pytest.raises(CommandError) as refused:
        command("import_benchmark", SLUG, str(release), "--version", "v1")
    message = str(refused.value)
    assert "questions.jsonl line 2: toyvqa/question: field 'answer' must be one of 'yes', 'no' (got 'maybe')" \
        in message
    assert "questions.jsonl line 3: duplicate id 'horse' (first at questions.jsonl line 1)" in message
    assert not BenchmarkVersion.objects.filter(benchmark__slug=SLUG).exists()
    assert Benchmark.objects.filter(slug=SLUG).exists()


def nav_links(html: str) -> list[tuple[str, str]]:
    """(label, address) of the main navigation's entries, in order."""
    nav = re.search(r'<nav class="mainnav".*?</nav>', html, re.S).group(0)
    return [(label, href) for href, label in re.findall(r'<a href="([^"]+)"[^>]*data-nav="([^"]+)"', nav)]


def test_a_sixth_benchmark_adds_its_page_and_navigation_entry_from_its_own_module(
        toyvqa, release, curator_client, annotator_client):
    """`tests/toy_frontend.py` registers a page, its address and a navigation entry; a curator finds the entry
    after the other benchmarks' and opens the page from it, which lists the imported questions."""
    command("import_benchmark", SLUG, str(release), "--version", "v1")
    links = nav_links(curator_client.get(reverse("home")).content.decode())
    labels = [label for label, _ in links]
    assert labels[labels.index("MAIA curation") + 1:labels.index("Benchmarks")] == ["ToyVQA questions"]
    address = dict(links)["ToyVQA questions"]
    assert address == reverse("toyvqa-questions") == "/toyvqa/questions/"

    page = curator_client.get(address)
    assert page.status_code == 200
    html = page.content.decode()
    assert re.search(r'class="active" data-nav="ToyVQA questions"', html)
    assert re.findall(r'<tr data-item="([^"]+)"><td>([^<]+)</td><td>([^<]+)</td></tr>', html) == [
        ("camera", "Is there a person in the picture?", "yes"), ("coins", "Is there a cat in the picture?", "no"),
        ("horse", "Is there a horse in the picture?", "yes")]

    # an annotator neither sees the entry nor opens the page
    assert "ToyVQA questions" not in dict(nav_links(annotator_client.get(reverse("home")).content.decode()))
    assert annotator_client.get(address).status_code == 403
