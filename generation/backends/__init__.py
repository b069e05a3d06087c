"""Model backends behind one small interface (see `base`). `load_backend` picks one by name."""

from generation.backends.base import (  # noqa: F401
    Backend,
    BackendError,
    ChatRequest,
    ChatResult,
    GenerationParams,
    ImagePart,
    TextPart,
    VideoPart,
)
from generation.backends.registry import load_backend  # noqa: F401
