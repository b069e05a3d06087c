"""Kit rows joined back to the requests they answer: by the `request_id` a row carries, else by its position
(lmms-eval's `doc_id`, VLMEvalKit's `index`) in the request order that the same export options produce. A
row that joins to no request keeps a name for it (`doc_id 17`, or its own unknown request id), so that the
scorer reports it as it reports an unknown request id."""

from __future__ import annotations

from dataclasses import dataclass, field

from evaluation.kits.registry import KitError, KitFormat, KitRead


@dataclass
class Joined:
    predictions: list[dict] = field(default_factory=list)  # as `evaluation.scoring.read_predictions` gives them
    report: dict = field(default_factory=dict)  # rows, how they were joined, where the responses came from


def join(kit: KitFormat, found: KitRead, requests: list) -> Joined:
    """Predictions (request id, response, sample) from a kit's rows; rows without a response give none.
    KitError naming both rows when two rows answer the same request."""
    joined = Joined()
    by = {"request_id": 0, kit.position_key: 0}
    seen: dict[str, str] = {}
    for row in found.rows:
        if row.request_id is not None:
            request_id = row.request_id
            by["request_id"] += 1
        else:
            inside = 0 <= row.position < len(requests)
            request_id = requests[row.position].request_id if inside else f"{kit.position_key} {row.position}"
            by[kit.position_key] += 1
        if request_id in seen:
            raise KitError(f"{row.where}: a second row for request {request_id!r} (the first is {seen[request_id]}).")
        seen[request_id] = row.where
        joined.predictions.extend({"request_id": request_id, "response": text, "sample": sample, "judgment": None}
                                  for sample, text in enumerate(row.responses))
    joined.report = {"format": kit.name, "rows": len(found.rows), "joined_by": by,
                     "responses_from": found.response_sources()}
    return joined
