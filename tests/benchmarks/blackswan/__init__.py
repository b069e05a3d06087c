"""BlackSwanSuite's tests: import, requests and scoring, splitting, the staged reveal and its language, the
localization, captions and quality studies, the task variants and their pages, human performance, end to end,
and its pages in a browser."""
