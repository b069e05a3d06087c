"""C-VQA's tests: source questions and subgroup labels, counterfactuals, verification, the grammar pass,
C-VQA-Synthetic, import, requests, scoring, end to end, and its pages in a browser."""
