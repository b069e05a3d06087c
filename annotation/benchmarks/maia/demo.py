"""MAIA demo items: Italian questions about the bundled sample videos, in the release's layout.

They are written for the demo (`seed_demo`): each question has 8 short answers and, per answer, one
true and one false statement, so that a tiny-model run has statement pairs (VSV) and open answers
(OEVQA) to score, BERTScore included.

`demo_studies` opens a question-writing study in Italian (`question_writing`) over the sample videos,
its approved questions going to the MAIA curation version, so that the demo's annotators can write
questions and its curator can review them.
"""

from annotation.benchmarks.maia import question_writing
from annotation.crowd import studies
from annotation.crowd.models import Study
from annotation.models import MediaAsset, Video

DEMO_QUESTIONS_SLUG = "demo-maia-questions"
DEMO_VIDEOS = ("bigbuckbunny.mp4", "bikes.mp4")

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


def demo_studies(curator) -> list[Study]:
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
