"""The interface every model backend implements.

A request is a chat: a list of messages, each with a role and a list of parts (text, images,
video frames). A backend turns a batch of requests into results with `n` sampled texts each.
Backends that can score text also implement `score_logprob` (judges, text-only baselines).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

from generation import model_text


@dataclass(frozen=True)
class TextPart:
    text: str
    type: str = "text"


@dataclass(frozen=True)
class ImagePart:
    """One still image (a PIL image) with a fingerprint that identifies its pixels for caching."""

    image: Any
    fingerprint: str
    type: str = "image"


@dataclass(frozen=True)
class VideoPart:
    """Video frames in order (PIL images), their indices in the source, and the source fps.

    Backends with native video input pass the frames as one video; others as separate images.
    """

    frames: tuple
    fingerprint: str
    frame_indices: tuple = ()
    fps: float = 1.0
    type: str = "video"


@dataclass(frozen=True)
class Message:
    role: str
    parts: tuple


@dataclass
class GenerationParams:
    max_new_tokens: int = 256
    temperature: float = 0.0
    top_p: float = 1.0
    n: int = 1
    seed: int = 0

    @property
    def sampling(self) -> bool:
        return self.temperature > 0 or self.n > 1

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass
class ChatRequest:
    messages: list[Message]
    params: GenerationParams = field(default_factory=GenerationParams)
    request_id: str = ""

    def text_only(self) -> bool:
        return all(isinstance(part, TextPart) for m in self.messages for part in m.parts)

    def describe(self) -> list[dict]:
        """A JSON-able record of the prompt, with media replaced by their fingerprints and indices."""
        out = []
        for message in self.messages:
            parts = []
            for part in message.parts:
                if isinstance(part, TextPart):
                    parts.append({"type": "text", "text": part.text})
                elif isinstance(part, ImagePart):
                    parts.append({"type": "image", "fingerprint": part.fingerprint})
                else:
                    parts.append({"type": "video", "fingerprint": part.fingerprint,
                                  "frame_indices": list(part.frame_indices), "frames": len(part.frames)})
            out.append({"role": message.role, "content": parts})
        return out


@dataclass
class ChatResult:
    """A request's sampled texts, as the database can keep them: NUL characters are removed from the texts and
    the error, and counted per text in `nul_removed` (`generation.model_text`)."""

    texts: list[str]
    latency_s: float = 0.0
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    error: str = ""
    nul_removed: list[int] = field(default_factory=list, init=False)

    def __post_init__(self):
        self.texts, self.nul_removed = model_text.texts_without_nul(self.texts)
        cleaned = model_text.without_nul(self.error)[0]
        self.error = cleaned or ("an error message of NUL characters only" if self.error else "")

    @property
    def ok(self) -> bool:
        return not self.error and all(t.strip() for t in self.texts)


class BackendError(RuntimeError):
    """A backend that cannot load or answer at all (as opposed to one failed request)."""


class Backend(Protocol):
    name: str
    model_id: str
    revision: str

    def generate(self, requests: list[ChatRequest]) -> list[ChatResult]:
        """One result per request, in order. A failed request gives a result with `error` set."""

    def score_logprob(self, texts: list[str], *, prefix: str = "") -> list[float]:
        """Length-normalised log-probability of each text (after an optional shared prefix)."""
