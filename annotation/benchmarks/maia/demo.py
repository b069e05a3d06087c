"""MAIA demo items: Italian questions about the bundled sample videos, in the release's layout.

They are written for the demo (`seed_demo`): each question has 8 short answers and, per answer, one
true and one false statement, so that a tiny-model run has statement pairs (VSV) and open answers
(OEVQA) to score, BERTScore included.

`demo_studies` opens two studies in Italian: a question-writing study (`question_writing`) over the
sample videos, its approved questions going to the MAIA curation version, and an answer-collection
study: the same questions as drafts of an unfrozen curation version (`DEMO_CURATION_LABEL`) on the sample
videos, each with the first `DEMO_ANSWERS_IN` of its answers already collected, so annotators add the
others.
"""

from django.db import transaction

from annotation import curation_stages
from annotation.benchmarks.maia import answer_collection, question_writing, stages
from annotation.crowd import studies
from annotation.crowd.models import Study
from annotation.models import Benchmark, BenchmarkVersion, MediaAsset, Video
from annotation.versions import add_item

DEMO_QUESTIONS_SLUG = "demo-maia-questions"
DEMO_VIDEOS = ("bigbuckbunny.mp4", "bikes.mp4")
DEMO_CURATION_LABEL = "demo-curation"
DEMO_ANSWERS_SLUG = "demo-maia-answers"
DEMO_ANSWERS_IN = 3
DEMO_ANSWERS_NAME = "MAIA: rispondi alle domande sui video"
DEMO_ANSWERS_INSTRUCTIONS = """Guarda tutto il video, leggi la domanda e la definizione della sua categoria,
poi **scrivi una risposta breve in italiano**, con parole tue: poche parole o una frase.

- Rispondi in base a ciò che si vede nel video. L'audio non viene usato: rispondi solo dalle immagini.
- Rispondi alla domanda: non "sì" o "no", ma che cosa succede, dove, perché, …
- Otto persone rispondono a ogni domanda; tu rispondi al massimo a 12 domande dello stesso video."""

# video file name → (category with its _A/_B suffix, question, 8 answers, 8 true, 8 false statements)
DEMO_QUESTIONS = {
    "bigbuckbunny.mp4": [
        ("SpazialeTotale_A", "Dove si trova il coniglio?",
         ["In un prato.", "Su un prato verde.", "In mezzo all'erba.", "In un prato con degli alberi.",
          "All'aperto, in un prato.", "Sul prato vicino agli alberi.", "In un campo erboso.", "Nell'erba del prato."],
         ["Il coniglio è in un prato.", "Il coniglio sta su un prato verde.", "Il coniglio è in mezzo all'erba.",
          "Il coniglio è in un prato con degli alberi.", "Il coniglio è all'aperto.",
          "Il coniglio è vicino agli alberi.", "Il coniglio è in un campo erboso.", "Il coniglio è nell'erba."],
         ["Il coniglio è in una cucina.", "Il coniglio sta su una spiaggia.", "Il coniglio è in mezzo al mare.",
          "Il coniglio è in una città.", "Il coniglio è al chiuso.", "Il coniglio è in una grotta.",
          "Il coniglio è su una strada.", "Il coniglio è nella neve."]),
        ("Sentiment_B", "Che atmosfera ha la scena?",
         ["Tranquilla.", "Serena.", "Calma e luminosa.", "Allegra.", "Pacifica.", "Rilassata.",
          "Soleggiata e tranquilla.", "Quieta."],
         ["La scena è tranquilla.", "La scena è serena.", "La scena è calma e luminosa.", "La scena è allegra.",
          "La scena è pacifica.", "La scena è rilassata.", "La scena è soleggiata.", "La scena è quieta."],
         ["La scena è violenta.", "La scena è cupa.", "La scena è buia e agitata.", "La scena è triste.",
          "La scena è caotica.", "La scena è tesa.", "La scena è piovosa.", "La scena è rumorosa."]),
    ],
    "bikes.mp4": [
        ("Pianificazione_A", "Cosa stanno facendo le persone nel video?",
         ["Vanno in bicicletta.", "Pedalano.", "Girano in bici.", "Pedalano su una strada.",
          "Guidano le biciclette.", "Fanno un giro in bici.", "Pedalano insieme.", "Si spostano in bicicletta."],
         ["Le persone vanno in bicicletta.", "Le persone pedalano.", "Le persone girano in bici.",
          "Le persone pedalano su una strada.", "Le persone guidano le biciclette.",
          "Le persone fanno un giro in bici.", "Le persone pedalano insieme.",
          "Le persone si spostano in bicicletta."],
         ["Le persone nuotano.", "Le persone dormono.", "Le persone cucinano.", "Le persone guidano un'auto.",
          "Le persone ballano.", "Le persone leggono un libro.", "Le persone sono sedute.",
          "Le persone volano in aereo."]),
    ],
}


def demo_items(media: dict) -> list[tuple[str, dict, dict]]:
    """(external id, payload, media) of the demo questions whose video is in `media` (by file name)."""
    items = []
    for name, questions in DEMO_QUESTIONS.items():
        if name not in media:
            continue
        video = name.rsplit(".", 1)[0]
        for index, (category, question, answers, true, false) in enumerate(questions):
            payload = {"kind": "question", "video": video, "category": category, "question": question,
                       "answers": answers, "true_statements": true, "false_statements": false}
            items.append((f"{video}/{category}/{index}", payload, {"video": media[name]}))
    return items


def _curation_version(curator, videos: dict) -> BenchmarkVersion | None:
    """The unfrozen demo curation version with the demo questions as drafts (made once)."""
    version = BenchmarkVersion.objects.filter(benchmark__slug="maia", label=DEMO_CURATION_LABEL).first()
    if version is not None or not videos:
        return version
    with transaction.atomic():
        version = BenchmarkVersion.objects.create(
            benchmark=Benchmark.objects.get(slug="maia"), label=DEMO_CURATION_LABEL, created_by=curator,
            source=BenchmarkVersion.Source.CURATION,
            description="Domande scritte sui video di esempio, in attesa delle loro 8 risposte.")
        for name, questions in DEMO_QUESTIONS.items():
            if name not in videos:
                continue
            stem = name.rsplit(".", 1)[0]
            for index, (category, question, answers, _true, _false) in enumerate(questions):
                item = add_item(version, f"{stem}/{category}/{index}", {
                    "kind": "question_draft", "video": stem, "category": category, "question": question,
                    "answers": answers[:DEMO_ANSWERS_IN]}, media={"video": videos[name]})
                curation_stages.start(item=item, stage=stages.QUESTION_WRITTEN, author=curator, by=curator)
    return version


def _answer_study(curator) -> list[Study]:
    """The demo's open MAIA answer-collection study, in Italian, over the drafts of the demo curation
    version on the sample videos (made once)."""
    study = Study.objects.filter(slug=DEMO_ANSWERS_SLUG).first()
    if study is not None:
        return [study]
    videos = {video.original_name: video for video in Video.objects.filter(
        original_name__in=list(DEMO_QUESTIONS), status=MediaAsset.Status.READY).order_by("pk")}
    version = _curation_version(curator, videos)
    if version is None:
        return []
    try:
        return [answer_collection.create_answer_study(
            curator, version, DEMO_ANSWERS_NAME, slug=DEMO_ANSWERS_SLUG, open_now=True,
            instructions=DEMO_ANSWERS_INSTRUCTIONS, required_attributes={}, pay_per_item="0.30", currency="EUR")]
    except studies.SlugTaken:  # seeded by a concurrent run meanwhile
        return [Study.objects.get(slug=DEMO_ANSWERS_SLUG)]


def _question_study(curator) -> list[Study]:
    """The demo's open question-writing study over the sample videos, in Italian, made once."""
    study = Study.objects.filter(slug=DEMO_QUESTIONS_SLUG).first()
    if study is not None:
        return [study]
    videos = list(Video.objects.filter(original_name__in=DEMO_VIDEOS, status=MediaAsset.Status.READY).order_by("pk"))
    if not videos:
        return []
    try:
        study = question_writing.create_question_study(
            curator, "MAIA: scrivi le domande sui video", videos=videos, slug=DEMO_QUESTIONS_SLUG, open_now=True,
            version=question_writing.curation_version(curator), pay_per_item="3.00",
            completion_code="DEMO-MAIA-QUESTIONS")
    except studies.SlugTaken:  # seeded by a concurrent run meanwhile
        study = Study.objects.get(slug=DEMO_QUESTIONS_SLUG)
    return [study]


def demo_studies(curator) -> list[Study]:
    """The demo's open MAIA studies, in Italian: question writing, then answer collection."""
    return [*_question_study(curator), *_answer_study(curator)]
