"""Italian stop words for the lexical statistics of MAIA answer pools (`pool_checks`).

Lower-cased, accents kept. Tokens are split on every non-letter, so an elided article or preposition
("l'acqua", "dell'auto", "un'ora", "c'è") leaves its elided part ("l", "dell", "un", "c") as a token of
its own: those parts are listed here, so that only "acqua", "auto", "ora" count as content words.
Forms of "essere" and "avere", articles, prepositions (simple and articulated), pronouns, conjunctions
and a few very common adverbs are stop words; nouns, adjectives and the other verbs are content words.
"""

_LINES = (
    "a ad al allo ai agli all alla alle",
    "c ci ce co col coi con cosa che chi cui come",
    "d da dal dallo dai dagli dall dalla dalle",
    "di del dello dei degli dell della delle",
    "e ed è era erano ero eri essere sono sei siamo siete sia siano stato stata stati state",
    "fu furono",
    "ha hai hanno ho abbiamo avete aveva avevano avere avuto",
    "i il in l la le lo gli",
    "ma mi me mia mio miei mie",
    "ne nel nello nei negli nell nella nelle",
    "no non o od",
    "per però più poi",
    "quale quali quando quanto quella quelle quelli quello questa queste questi questo quest quell",
    "se si sì su sul sullo sui sugli sull sulla sulle",
    "ti te tu tua tuo tuoi tue",
    "tra fra",
    "un uno una",
    "vi voi noi lui lei loro egli ella esso essa essi esse",
    "anche ancora già molto poco tutto tutti tutta tutte",
)

STOPWORDS = frozenset(word for line in _LINES for word in line.split())
