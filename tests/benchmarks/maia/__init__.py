"""MAIA's tests: import and export, categories, question writing and answer collection, the answer pools
and their checks, statements and their checks, stages, requests, scoring, end to end, and its pages in a
browser."""
