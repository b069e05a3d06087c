"""BlackSwanSuite item payloads: a `video` record, its `mcq` and `yn` rows (SPEC §1).

`video` is the VAR_Data.json record under its own field names, with `id` as text and the split's
start times (`preevent`, `event`, `postevent`, seconds) as numbers; the release's other fields are
typed as the importer reads them (`task2_gt` may hold an empty text where the forecast held).
`mcq` and `yn` rows name their video by `id`.
"""

from typing import Literal

from annotation.benchmarks.registry import Payload
from annotation.benchmarks.types import (
    Id,
    Mark,
    NonEmptyString,
    Number,
    NumberLike,
    Text,
    WholeNumberLike,
    marks,
    one_of,
    strings,
    texts,
)


class BlackSwanVideo(Payload):
    """A VAR_Data.json record: the video's split and the three tasks' ground truth."""

    kind: Literal["video"]
    id: NonEmptyString
    preevent: Number
    event: Number
    postevent: Number
    set_id: Id | None = None
    index: WholeNumberLike | None = None
    frames_url: Text | None = None
    end: NumberLike | None = None
    task1_gt: texts(3) | None = None
    task2_gt: texts(3) | None = None
    task3_gt: Text | None = None
    task2_checkboxes: marks(3) | None = None
    task3_checkboxes: marks(3) | None = None
    multivideo: Mark | None = None
    difficulty: Text | None = None
    preevent_caption: Text | None = None
    pc_preevent: Text | None = None
    pc_postevent: Text | None = None
    pc_comp: Text | None = None


class BlackSwanMcq(Payload):
    """An mcq.json row: three options and the right one (0–2), for the Detective (1) or Reporter (2) task."""

    kind: Literal["mcq"]
    id: NonEmptyString
    mcq_task: one_of(1, 2)
    mcq_options: strings(3)
    mcq_label: one_of(0, 1, 2)


class BlackSwanYn(Payload):
    """A yn.json row: a hypothesis (`exp`) and whether it holds."""

    kind: Literal["yn"]
    id: NonEmptyString
    def_task: one_of(1, 2)
    exp: NonEmptyString
    def_label: one_of("yes", "no")


PAYLOADS = (BlackSwanVideo, BlackSwanMcq, BlackSwanYn)
