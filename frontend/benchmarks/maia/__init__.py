"""MAIA's pages: the reasoning categories and their edit form, with every MAIA version's checks
(`category_views`), the answer-pool agreement report and review of a version (`pool_views`), the failing
statement pairs of a version and the statement-generation console (`statement_views`); their addresses
(`urls`) and the navigation entry (`navigation`). The templates are under `frontend/templates/maia/`."""
