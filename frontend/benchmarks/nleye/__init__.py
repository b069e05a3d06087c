"""NL-EYE's pages: the curation console of the triplets (`console_views`), the explanation and validation of
a triplet and a version's validation state (`triplet_validation_views`), and the spread of a scene-writing
study's pool (`scene_views`); their addresses (`urls`) and the navigation entry (`navigation`). The
templates are under `frontend/templates/nleye/`."""
