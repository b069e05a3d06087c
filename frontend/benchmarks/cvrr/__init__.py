"""CVRR-ES's pages: the curation hub, the dimensions, the video pool and the captions (`curation_views`), the QA
console with its filtration and noise report (`qa_views`) and the expert assessment (`expert_views`); their
addresses (`urls`) and the navigation entry (`navigation`). The templates are under `frontend/templates/cvrr/`,
the QA console's script under `frontend/static/frontend/cvrr/`."""
