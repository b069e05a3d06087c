"""C-VQA's pages: the hub, the upload of source questions and the images' subgroup labels
(`sources_views`), the counterfactual groups and the counterfactual console of a sources version
(`counterfactual_views`), two-person verification and adjudication (`verification_views`) and the grammar
pass (`grammar_views`); their addresses (`urls`) and the navigation entry (`navigation`). The templates are
under `frontend/templates/cvqa/`."""

CRUMBS = (("C-VQA curation", "cvqa-curation"),)  # above a refusal on its pages
