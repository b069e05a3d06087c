"""BlackSwanSuite's curation workflow: splitting library videos into the parts its tasks reveal in stages
(`splits`)."""
