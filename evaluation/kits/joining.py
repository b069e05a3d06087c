"""Kit rows joined back to the requests they answer: by the `request_id` a row carries, else by its position
(lmms-eval's `doc_id`, VLMEvalKit's `index`) in the request order that the same export options produce. A
row that joins to no request keeps a name for it (`doc_id 17`, or its own unknown request id), so that the
scorer reports it as it reports an unknown request id.

`Joiner` joins one row at a time (a file read as a stream, `KitFormat.rows`); `join` joins every row read."""

from __future__ import annotations

from dataclasses import dataclass, field

from evaluation.kits.registry import KitError, KitFormat, KitRead, KitRow


@dataclass
class Joined:
    predictions: list[dict] = field(default_factory=list)  # as `evaluation.scoring.read_predictions` gives them
    report: dict = field(default_factory=dict)  # rows, how they were joined, where the responses came from


class Joiner:
    """Joins a kit's rows to `requests` (in the export order) one by one, counting how each was joined and
    where its first response came from (`report`)."""

    def __init__(self, kit: KitFormat, requests: list):
        self.kit = kit
        self.request_ids = [request.request_id for request in requests]
        self.rows = 0
        self.joined_by = {"request_id": 0, kit.position_key: 0}
        self.responses_from: dict[str, int] = {}
        self.seen: dict[str, str] = {}  # request id → the row that answered it

    def predictions(self, row: KitRow) -> list[dict]:
        """The predictions (request id, response, sample) of one row; none when it has no response. KitError
        naming both rows when a second row answers the same request."""
        if row.request_id is not None:
            request_id = row.request_id
            self.joined_by["request_id"] += 1
        else:
            inside = 0 <= row.position < len(self.request_ids)
            request_id = self.request_ids[row.position] if inside else f"{self.kit.position_key} {row.position}"
            self.joined_by[self.kit.position_key] += 1
        if request_id in self.seen:
            raise KitError(f"{row.where}: a second row for request {request_id!r} (the first is "
                           f"{self.seen[request_id]}).")
        self.seen[request_id] = row.where
        self.rows += 1
        source = row.response_from or "none"
        self.responses_from[source] = self.responses_from.get(source, 0) + 1
        return [{"request_id": request_id, "response": text, "sample": sample, "judgment": None}
                for sample, text in enumerate(row.responses)]

    @property
    def report(self) -> dict:
        return {"format": self.kit.name, "rows": self.rows, "joined_by": dict(self.joined_by),
                "responses_from": dict(self.responses_from)}


def join(kit: KitFormat, found: KitRead, requests: list) -> Joined:
    """Predictions (request id, response, sample) from a kit's rows; rows without a response give none.
    KitError naming both rows when two rows answer the same request."""
    joiner = Joiner(kit, requests)
    predictions = [prediction for row in found.rows for prediction in joiner.predictions(row)]
    return Joined(predictions, joiner.report)
