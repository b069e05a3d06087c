"""The worker's page of a staged claim (`staged`): one page per step, which holds only the
clips the claim's current step shows, and the read-only example of the first step a platform shows before a
worker accepts the task. The kind's `task_page` and `task_preview` (`annotation.crowd.kinds`)."""

from django.urls import reverse

from annotation.benchmarks.blackswan import staged
from annotation.crowd import task_page
from annotation.crowd.instructions import render_markdown
from annotation.crowd.models import Claim, Study

TEMPLATE = "blackswan/step.html"


def _step_rows(step: str, draft: dict, earlier: dict) -> dict:
    """The step's questions with the draft's answers filled in, and the earlier answers they are about."""
    numbers = range(staged.HYPOTHESES)
    if step == staged.FORECASTER:
        return {"scenarios": [{"index": i, "number": i + 1, "text": staged.entry_at(draft, "scenarios", i) or ""}
                              for i in numbers]}
    if step == staged.DETECTIVE:
        return {"forecasts": [{"index": i, "number": i + 1, "forecast": earlier["forecasts"][i],
                               "mark": staged.entry_at(draft, "forecast_valid", i),
                               "text": staged.entry_at(draft, "new_hypotheses", i) or ""} for i in numbers]}
    if step == staged.REPORTER:
        return {"hypotheses": [{"index": i, "number": i + 1, "hypothesis": earlier["hypotheses"][i],
                                "kept": earlier["forecast_valid"][i] == "yes",
                                "mark": staged.entry_at(draft, "hypothesis_valid", i)} for i in numbers],
                "caption": draft.get("caption") or ""}
    return {}


def _limits() -> dict:
    return {"min_text": staged.MIN_TEXT, "max_text": staged.MAX_TEXT, "max_caption": staged.MAX_CAPTION}


def step_page(study: Study, claim: Claim) -> dict:
    """The page of a staged claim's current step: its players only (no URL of a clip the step hides),
    its questions with the step's own draft, the worker's earlier answers, and where to save and submit."""
    state = staged.stage_state(claim)
    step = state["step"]
    earlier_items = Claim.objects.filter(study=study, worker_id=claim.worker_id).exclude(pk=claim.pk).count()
    urls = {}
    if step in staged.STEPS:
        urls = {"draft_url": reverse("api-claim-step-draft", kwargs={"pk": claim.pk, "step": step}),
                "submit_url": reverse("api-claim-step-submit", kwargs={"pk": claim.pk, "step": step})}
    return {
        "template": TEMPLATE,
        **state, "study": study, "claim": claim, "item": claim.item, "preview": False,
        "step_label": staged.step_label(step), "step_count": len(staged.STEPS),
        "draft_saved": bool(state["draft"]), **_step_rows(step, state["draft"], state["earlier"]),
        "instructions": render_markdown(study.instructions), "show_instructions": earlier_items == 0,
        "items_done": earlier_items, "limits": _limits(), **urls, **task_page.standing(study, claim.worker),
    }


def preview_page(study: Study) -> dict:
    """A read-only example of the first step, without any video (it needs an accepted assignment)."""
    task_page.check_previewable(study)
    step = staged.FORECASTER
    return {
        "template": TEMPLATE,
        "study": study, "claim": None, "item": None, "preview": True, "step": step, "step_number": 1,
        "step_label": staged.step_label(step), "step_count": len(staged.STEPS),
        "steps": [{"step": s, "label": staged.step_label(s), "number": i + 1,
                   "state": "current" if s == step else "upcoming"} for i, s in enumerate(staged.STEPS)],
        "parts": [], "draft": {}, "earlier": {}, **_step_rows(step, {}, {}),
        "instructions": render_markdown(study.instructions), "show_instructions": True, "limits": _limits(),
    }
