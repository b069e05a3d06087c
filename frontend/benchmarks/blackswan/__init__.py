"""BlackSwanSuite's pages for curators: the task variants built from a staged-reveal study, their preview and
freezing, a localization study's report and a +P/+PC captions study's captions (`variants_views`); their
addresses (`urls`) and the navigation entry (`navigation`). The templates, the staged-reveal step's included,
are under `frontend/templates/blackswan/`, its styles under `frontend/static/frontend/blackswan/`."""
