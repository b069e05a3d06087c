"""A text backend whose answers a test writes, loaded through the backend registry like a real one.

A test module subclasses `ScriptedBackend` with its `default(prompt text)` (and, where a reply should be
chosen by part of the prompt only, `searched(prompt text)`), then installs it with `install`:
`REPLIES[needle]` overrides the default for a prompt whose searched part holds `needle`, and
`prompts_seen` lists every prompt text the backend was given."""

from generation.backends import registry
from generation.backends.base import ChatResult


class ScriptedBackend:
    REPLIES: dict = {}
    prompts_seen: list = []

    def __init__(self, model_id: str, revision: str = "", **options):
        self.model_id, self.revision = model_id, revision or "rev-1"

    @staticmethod
    def default(text: str) -> str:
        raise NotImplementedError

    @staticmethod
    def searched(text: str) -> str:
        return text

    def generate(self, requests):
        results = []
        for request in requests:
            text = request.messages[-1].parts[-1].text
            type(self).prompts_seen.append(text)
            reply = next((r for needle, r in type(self).REPLIES.items() if needle in self.searched(text)), None)
            results.append(ChatResult(texts=[reply if reply is not None else self.default(text)], latency_s=0.01))
        return results


def install(monkeypatch, backend: type[ScriptedBackend]) -> type[ScriptedBackend]:
    """Register `backend` under its `name` for this test, with no replies and no prompts seen yet."""
    monkeypatch.setitem(registry.LOADERS, backend.name, (backend.__module__, backend.__name__))
    monkeypatch.setattr(backend, "REPLIES", {})
    monkeypatch.setattr(backend, "prompts_seen", [])
    return backend
