"""The yes/no question detector of MAIA's question-writing form (`annotation.benchmarks.maia.yes_no`)."""

import pytest

from annotation.benchmarks.maia.categories import DEFAULTS
from annotation.benchmarks.maia.yes_no import YES_NO_MESSAGE, is_yes_no

ITALIAN_YES_NO = [
    "Il cane è felice?",
    "La persona prende l'ombrello?",
    "Piove fuori?",
    "Il concerto verrebbe interrotto se arrivasse un temporale?",
    "C'è una macchina nella scena?",
    "C’è un gatto?",
    "Ci sono persone sedute al tavolo?",
    "È vero che il cane corre?",
    "E' vero che la luce resta accesa?",
    "È possibile che stia per piovere?",
    "Il bambino piange o no?",
    "Il bambino piange oppure no?",
    "La donna sorride sì o no?",
    "Il ragazzo ha finito di mangiare o meno?",
    "Il cane corre, vero?",
    "Secondo te, il cane è stanco?",
    "Mentre suona, il cantante balla?",
    "Il ragazzo, che indossa un cappello, sorride?",
    "Si vede il mare?",
    "Hai visto dove va il cane?",
    "Sai dirmi se il cane abbaia?",
    "Ma il cameriere porta il caffè?",
    "È rosso o blu il vestito?",
    "La pasta è già cotta quando la scolano?",
    "Esiste un motivo per cui ride?",
    "Il video mostra una partita di calcio. La squadra vince?",
]

ITALIAN_OPEN = [
    "Per quale motivo la persona prende l'ombrello?",
    "Perché il bicchiere si è rotto?",
    "Perchè il bicchiere si è rotto?",
    "Cosa succederebbe al concerto se arrivasse un forte temporale?",
    "Che cosa fa il cane?",
    "Che tempo fa fuori?",
    "Dove si trova la penna?",
    "Dov'è l'insegnante?",
    "Dov’è l’insegnante?",
    "Di che colore è la macchina?",
    "Cosa dovrebbe fare il cane per continuare a giocare col padrone?",
    "Che atteggiamento hanno i bimbi?",
    "Dove si trova l'insegnante all'inizio del video?",
    "Che succede dopo che il chitarrista inizia a suonare?",
    "Per quanto tempo la luce rimane accesa?",
    "Quanti anni ha il cane?",
    "Chi apre la porta?",
    "Con chi parla la donna?",
    "A chi passa la palla il giocatore?",
    "Quale piatto viene servito?",
    "Qual è il colore della maglia?",
    "Quali oggetti ci sono sul tavolo?",
    "Quante persone ballano?",
    "Quando arriva il treno?",
    "Come si muove il gatto?",
    "Com'è vestito il cameriere?",
    "In che modo il cuoco taglia la verdura?",
    "Fino a quando resta seduto?",
    "Da quanto tempo aspettano?",
    "A che ora inizia la partita?",
    "Quando entra in cucina, cosa fa la nonna?",
    "Secondo te, perché il bambino piange?",
    "E dove va il cane dopo?",
    "Nella scena finale, chi vince?",
    "Descrivi cosa fa il cuoco.",
    "Sai dirmi dove va il cane?",
    "Mi puoi dire perché ride?",
    "Il cane corre. Dove va?",
    "DOVE VA IL CANE?",
    "Cos'è appoggiato sul tavolo?",
    "Com è vestito il cameriere?",
    "Dov e la palla?",
]

ENGLISH_YES_NO = [
    "Is the dog happy?",
    "Are the children bored?",
    "Was the light on?",
    "Were there any cars?",
    "Do they play football?",
    "Does the man take the umbrella?",
    "Did the glass break?",
    "Can the dog reach the ball?",
    "Could it be raining outside?",
    "Will the concert stop?",
    "Would the concert stop if it rained?",
    "Should the dog jump on the bench?",
    "Has the train arrived?",
    "Have the guests left?",
    "Had the singer started before the guitarist?",
    "Isn't it raining?",
    "Doesn't the cook add salt?",
    "May the child go out?",
    "Must he wait?",
    "So, is the teacher in the classroom?",
    "The dog is running?",
    "The man is angry, isn't he?",
    "The dog eats, or not?",
    "There is a car in the scene?",
    "Can you tell me if the dog barks?",
]

ENGLISH_OPEN = [
    "Why does the person take the umbrella?",
    "Why did the glass break?",
    "What would happen to the concert if a violent thunderstorm started?",
    "What's the weather like outside?",
    "Where is the pen?",
    "What color is the car?",
    "What should the dog do to continue playing with its owner?",
    "What is the attitude of the children?",
    "Where is the teacher at the beginning of the video?",
    "What happens after the guitarist starts playing?",
    "How long was the light on?",
    "How old is the dog?",
    "Who opens the door?",
    "Which dish is served?",
    "Whose bag is on the chair?",
    "When does the train arrive?",
    "In which room is the teacher?",
    "After the goal, what do the players do?",
    "Describe what the cook does.",
    "Can you tell me where the dog goes?",
    "Do you know why the child cries?",
]


@pytest.mark.parametrize("question", ITALIAN_YES_NO + ENGLISH_YES_NO)
def test_yes_no_questions_are_detected(question):
    assert is_yes_no(question) is True


@pytest.mark.parametrize("question", ITALIAN_OPEN + ENGLISH_OPEN)
def test_open_questions_pass(question):
    assert is_yes_no(question) is False


def test_the_paper_examples_are_open_questions():
    for key, texts in DEFAULTS.items():
        for example in texts["examples"]:
            assert is_yes_no(example["question_it"]) is False, (key, example["question_it"])
            assert is_yes_no(example["question_en"]) is False, (key, example["question_en"])


@pytest.mark.parametrize("text", ["", "   ", "?", None, "...?"])
def test_empty_text_is_not_yes_no(text):
    assert is_yes_no(text) is False


def test_messages_in_both_languages():
    assert set(YES_NO_MESSAGE) == {"it", "en"}
    assert "sì/no" in YES_NO_MESSAGE["it"] and "yes/no" in YES_NO_MESSAGE["en"]
