"""One refusal page for the benchmarks' pages (`frontend/refused.html`): what was refused and why, with its
status, and the crumbs back to the pages the curator came from (`(label, URL name)` pairs)."""

from django.shortcuts import render
from django.urls import reverse


def refused(request, message: str, status: int, crumbs=()):
    """The refusal page, answered with `status`."""
    links = [(label, reverse(name)) for label, name in crumbs]
    return render(request, "frontend/refused.html", {"message": message, "status": status, "crumbs": links},
                  status=status)
