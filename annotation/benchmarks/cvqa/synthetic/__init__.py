"""C-VQA-Synthetic made here (seeds/001 §3.3, SPEC §2): seeded random scenes (`scenes`), the six
question templates (`templates`), options A–D with balanced answer letters (`options`), pictures
(`render`) and the release folder with its `scenes.jsonl` (`writer`); `manage.py make_cvqa_synthetic`.
Pure Python and Pillow: the same seed gives the same bytes."""
