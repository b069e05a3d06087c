"""The settings the test suite runs with (pyproject.toml): the platform's own, in development mode unless
the environment says otherwise. DEBUG is off by default (config/settings.py), and the settings derived
from it (the development secret key, no HTTPS redirect, plain cookies and static files) are what the
tests expect; pytest-django still runs each test with DEBUG off. Processes the tests start inherit it."""

import os

os.environ.setdefault("DJANGO_DEBUG", "true")

from config.settings import *  # noqa: E402,F403
