"""BlackSwanSuite's pages for curators: the task variants built from a staged-reveal study, their preview and
freezing (`variants_views`), a localization study's report (`localization_views`) and a +P/+PC captions
study's captions (`caption_views`); their addresses (`urls`) and the navigation entry (`navigation`). The
templates, the staged-reveal step's included, are under `frontend/templates/blackswan/`, its styles under
`frontend/static/frontend/blackswan/`."""
