"""The benchmarks, one package each (`annotation/benchmarks/<slug>/`), and their registry.

A package holds what its benchmark is as data: its display name and description, its item payload
schema (`payload.py`, pydantic models per record kind), its release importer (`importer.py`) and
exporter (`exporter.py`), registered in its `__init__` with `@register` (see `registry`). The app
discovers the packages when it is ready; a sixth benchmark is a new package and nothing else.
"""
