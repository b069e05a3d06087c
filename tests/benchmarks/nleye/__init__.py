"""NL-EYE's tests: import and export, curation (scenes, prompts, explanation, validation), requests, scoring,
judged explanations written back, end to end, and its pages in a browser."""
