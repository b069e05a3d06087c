"""CVRR-ES's tests: import and export, curation (dimensions, video pool, captions, QA generation and
filtration, expert assessment), requests, scoring, human answers, end to end, and its pages in a browser."""
