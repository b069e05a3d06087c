"""The image studio's pages (`/studio/`): the items with image slots, one slot's studio (scene text,
current image, the generation form with its mask painter, the item's attempt tree with live
progress), the comparison of two images, and picking a slot's final image.

Thin views over `annotation.image_studio` (what changes) and `annotation.image_studio_selectors`
(what is read). frontend/static/frontend/studio.js sends the forms with fetch (asking for JSON:
201/200 with what changed, or a 4xx with an `error` a person can read) and paints the inpainting
mask; without it the forms post as usual and the page comes back with the outcome. Curators and
admins only, like the other curating pages.
"""

from urllib.parse import urlencode

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import Http404, JsonResponse
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.views.decorators.http import require_POST, require_safe

from annotation import image_studio as studio
from annotation import image_studio_selectors as selectors
from annotation.curation_models import ImageAttempt
from annotation.media_serving import serve_protected
from config.permissions import roles_allowed
from config.roles import ADMIN, CURATOR
from generation import diffusion

PER_PAGE = 50
Mode = ImageAttempt.Mode


def _wants_json(request) -> bool:
    return "application/json" in request.headers.get("Accept", "")


def _item_or_404(item_id: int):
    item = selectors.studio_item(item_id)
    if item is None:
        raise Http404(f"There is no item #{item_id}.")
    return item


def _slot_or_404(item, slot: str) -> str:
    try:
        return studio.check_slot(item, slot)
    except studio.StudioError as exc:
        raise Http404(exc.message) from None


def _attempt_or_404(pk: int) -> ImageAttempt:
    found = selectors.attempt(pk)
    if found is None:
        raise Http404(f"There is no image attempt #{pk}.")
    return found


# --- Index ---------------------------------------------------------------------------------

@roles_allowed(CURATOR, ADMIN)
@require_safe
def index(request):
    """Items with image slots (every draft version's, or one version's), each slot with its current image
    and its number of attempts."""
    raw_version = request.GET.get("version", "").strip()
    chosen = selectors.version(int(raw_version)) if raw_version.isdigit() else None
    if raw_version and chosen is None:
        raise Http404(f"There is no version {raw_version!r}.")
    query = request.GET.get("q", "").strip()
    page = Paginator(selectors.studio_items(chosen, query), PER_PAGE).get_page(request.GET.get("page"))
    summaries = selectors.slot_summaries(page.object_list)
    return render(request, "frontend/studio_index.html", {
        "page": page, "rows": [(item, summaries[item.pk]) for item in page.object_list],
        "versions": selectors.studio_versions(), "chosen": chosen, "query": query,
        "filter_query": urlencode({k: v for k, v in (("version", raw_version), ("q", query)) if v}),
    })


# --- One slot's studio ---------------------------------------------------------------------

def _image_url(node_image) -> str:
    return reverse("media-image-file", kwargs={"pk": node_image.pk})


def attempt_image_url(found: ImageAttempt) -> str:
    return reverse("studio-attempt-image", kwargs={"pk": found.pk}) if found.image else ""


def parent_choices(item, attempts: list[ImageAttempt], images: dict) -> list[dict]:
    """What an attempt may start from: the item's images by role, then its finished attempts, newest first."""
    choices = []
    for role, image in images.items():
        choices.append({"key": f"image:{image.pk}", "label": f"{role}: current image “{image.title}”",
                        "src": _image_url(image), "width": image.width or "", "height": image.height or ""})
    for found in reversed(attempts):
        if found.status == ImageAttempt.Status.DONE and found.image:
            params = found.params or {}
            choices.append({"key": f"attempt:{found.pk}", "src": attempt_image_url(found),
                            "label": f"{found.slot}: attempt #{found.pk} ({found.get_mode_display().lower()}, "
                                     f"seed {found.seed})",
                            "width": params.get("width", ""), "height": params.get("height", "")})
    return choices


def default_parent(slot: str, images: dict, attempts: list[ImageAttempt], slots: list[str]) -> str:
    """The slot's current image, else its latest finished attempt, else the first slot's image."""
    if slot in images:
        return f"image:{images[slot].pk}"
    for found in reversed(attempts):
        if found.slot == slot and found.status == ImageAttempt.Status.DONE and found.image:
            return f"attempt:{found.pk}"
    for other in slots:
        if other in images:
            return f"image:{images[other].pk}"
    return ""


def _live_parts(request, item, slot: str) -> dict:
    """The parts of the studio page that change while jobs run: the tree, the parent choices, the current
    image."""
    attempts = list(selectors.attempts_of(item))
    images = selectors.item_images(item)
    slots = studio.image_slots(item)
    return {
        "tree": selectors.attempt_tree(item, attempts), "images": images, "current": images.get(slot),
        "parents": parent_choices(item, attempts, images),
        "parent_key": request.POST.get("parent") if request.method == "POST" else
        default_parent(slot, images, attempts, slots),
        "attempt_count": len(attempts), "slot_counts": {name: sum(1 for a in attempts if a.slot == name)
                                                        for name in slots},
    }


def _studio_context(request, item, slot: str, *, form: dict | None = None, error: str = "") -> dict:
    slots = studio.image_slots(item)
    values = studio.defaults(item, slot)
    models = selectors.model_choices()
    values.update({"model_id": models["text2image"][0].name if models["text2image"] else "",
                   "inpaint_model_id": models["inpaint"][0].name if models["inpaint"] else ""})
    if form:
        values.update({key: value for key, value in form.items() if key in values or key == "parent"})
    return {
        "item": item, "slot": slot, "slots": slots, "frozen": item.version.frozen,
        "payload_rows": [(key, value) for key, value in (item.payload or {}).items() if key != "kind"],
        "slot_text": studio.slot_text(item, slot), "augmented": studio.default_prompt(item, slot),
        "values": values, "schedulers": diffusion.schedulers(), "models": models, "modes": Mode,
        "error": error, **_live_parts(request, item, slot),
    }


@roles_allowed(CURATOR, ADMIN)
@require_safe
def slot_page(request, item_id: int, slot: str):
    """GET: the studio for one slot. `?part=live` answers the changing parts as JSON for the page's script."""
    item = _item_or_404(item_id)
    slot = _slot_or_404(item, slot)
    if request.GET.get("part") == "live":
        parts = _live_parts(request, item, slot)
        context = {"item": item, "slot": slot, "frozen": item.version.frozen, **parts}
        return JsonResponse({
            "tree": render_to_string("frontend/studio_tree.html", context, request=request),
            "parents": render_to_string("frontend/studio_parents.html", context, request=request),
            "current": render_to_string("frontend/studio_current.html", context, request=request),
            "running": _running(parts["tree"]),
        })
    return render(request, "frontend/studio.html", _studio_context(request, item, slot))


def _running(nodes) -> list[int]:
    found = []
    for node in nodes:
        if node.attempt is not None and node.status in studio.ACTIVE:
            found.append(node.attempt.pk)
        found.extend(_running(node.children))
    return found


def _refused(request, item, slot: str, exc: studio.StudioError):
    if _wants_json(request):
        return JsonResponse({"error": exc.message}, status=exc.status)
    if exc.status == 403:
        raise PermissionDenied(exc.message)
    return render(request, "frontend/studio.html",
                  _studio_context(request, item, slot, form=request.POST.dict(), error=exc.message), status=exc.status)


@roles_allowed(CURATOR, ADMIN)
@require_POST
def start(request, item_id: int, slot: str):
    """Start an attempt: `mode` (text2image, image2image, inpaint), the prompt and its suffix, the seed and the
    parameters, `model_id` (`inpaint_model_id` for inpainting from the page's form), `parent` (attempt:<id> or
    image:<id>) and, for inpainting, `mask` (a PNG of the parent's size)."""
    item = _item_or_404(item_id)
    slot = _slot_or_404(item, slot)
    data = request.POST.dict()
    mode = data.get("mode", "")
    if mode == Mode.INPAINT and data.get("inpaint_model_id", "").strip():
        data["model_id"] = data["inpaint_model_id"]
    try:
        settings = studio.parse_settings(data, item=item)
        parent = studio.resolve_parent(item, data.get("parent", "")) if mode != Mode.TEXT_TO_IMAGE else None
        attempt = studio.start_attempt(item, slot, settings, user=request.user, parent=parent,
                                       mask_upload=request.FILES.get("mask") if mode == Mode.INPAINT else None)
    except studio.StudioError as exc:
        return _refused(request, item, slot, exc)
    message = f"Attempt #{attempt.pk} queued ({attempt.get_mode_display().lower()}, job #{attempt.job_id})."
    if _wants_json(request):
        return JsonResponse({**attempt_json(attempt), "message": message}, status=201)
    messages.success(request, message)
    return redirect(reverse("studio-slot", kwargs={"item_id": item.pk, "slot": slot}) + f"#attempt-{attempt.pk}")


# --- Attempts ------------------------------------------------------------------------------

def attempt_json(found: ImageAttempt) -> dict:
    status, error = selectors.shown_status(found)
    parent = studio.parent_of(found)
    return {
        "id": found.pk, "item": found.item_id, "slot": found.slot, "mode": found.mode, "status": status,
        "error": error, "prompt": found.prompt, "negative_prompt": found.negative_prompt, "seed": found.seed,
        "model_id": found.model_id, "revision": found.revision, "scheduler": found.scheduler, "params": found.params,
        "parent": parent.key or None, "duration_s": found.duration_s, "provenance": found.provenance,
        "created_by": found.created_by.username, "created_at": found.created_at.isoformat(),
        "chosen_at": found.chosen_at.isoformat() if found.chosen_at else None,
        "chosen_by": found.chosen_by.username if found.chosen_by else None,
        "job": found.job_id, "job_url": reverse("job-detail", kwargs={"pk": found.job_id}) if found.job_id else None,
        "image_url": attempt_image_url(found) or None,
        "mask_url": reverse("studio-attempt-mask", kwargs={"pk": found.pk}) if found.mask else None,
        "studio_url": reverse("studio-slot", kwargs={"item_id": found.item_id, "slot": found.slot}),
    }


@roles_allowed(CURATOR, ADMIN)
@require_safe
def attempt_detail(request, pk: int):
    """One attempt as JSON (what the page's script reads when its job ends)."""
    return JsonResponse(attempt_json(_attempt_or_404(pk)))


@roles_allowed(CURATOR, ADMIN)
@require_POST
def pick_final(request, pk: int):
    """Make a finished attempt its slot's image (409 while it is unfinished or when the version is frozen)."""
    found = _attempt_or_404(pk)
    try:
        linked = studio.pick_final(found, request.user)
    except studio.StudioError as exc:
        return _refused(request, found.item, found.slot, exc)
    message = f"Attempt #{found.pk} is now the {found.slot} image of {found.item.external_id}."
    if _wants_json(request):
        return JsonResponse({"attempt": found.pk, "slot": found.slot, "image": linked.image_id,
                             "image_url": reverse("media-image-file", kwargs={"pk": linked.image_id}),
                             "message": message})
    messages.success(request, message)
    return redirect("studio-slot", item_id=found.item_id, slot=found.slot)


def _serve_attempt_file(request, pk: int, field: str):
    found = _attempt_or_404(pk)
    fieldfile = getattr(found, field)
    if not fieldfile:
        raise Http404("This attempt has no such file (yet).")
    return serve_protected(request, fieldfile)


@roles_allowed(CURATOR, ADMIN)
@require_safe
def attempt_image(request, pk: int):
    return _serve_attempt_file(request, pk, "image")


@roles_allowed(CURATOR, ADMIN)
@require_safe
def attempt_mask(request, pk: int):
    return _serve_attempt_file(request, pk, "mask")


# --- Comparison ----------------------------------------------------------------------------

COMPARED_FIELDS = (("Slot", "slot"), ("Mode", "mode"), ("Status", "status"), ("Prompt", "prompt"),
                   ("Negative prompt", "negative_prompt"), ("Seed", "seed"), ("Model", "model_id"),
                   ("Revision", "revision"), ("Scheduler", "scheduler"), ("Steps", "steps"),
                   ("Guidance", "guidance"), ("Size", "size"), ("Strength", "strength"), ("Parent", "parent"),
                   ("Mask", "mask"), ("Duration", "duration"), ("By", "by"), ("When", "when"))


def _side(item, key: str) -> dict:
    """One side of a comparison: an attempt of the item or an image the item uses or started from."""
    kind, _, raw = (key or "").partition(":")
    if not raw.isdigit() or kind not in ("attempt", "image"):
        raise studio.StudioError(f"Compare attempt:<id> or image:<id>, not {key!r}.")
    if kind == "attempt":
        found = selectors.attempt(int(raw))
        if found is None or found.item_id != item.pk:
            raise studio.StudioError(f"Attempt #{raw} is not an attempt of item {item.external_id}.", 404)
        status, error = selectors.shown_status(found)
        params = found.params or {}
        parent = studio.parent_of(found)
        facts = {"slot": found.slot, "mode": found.get_mode_display(), "status": status, "prompt": found.prompt,
                 "negative_prompt": found.negative_prompt, "seed": found.seed, "model_id": found.model_id,
                 "revision": found.revision, "scheduler": found.scheduler or "default",
                 "steps": params.get("steps", ""), "guidance": params.get("guidance", ""),
                 "size": f"{params.get('width', '?')}×{params.get('height', '?')}",
                 "strength": params.get("strength", ""), "parent": parent.key, "mask": "yes" if found.mask else "",
                 "duration": f"{found.duration_s:.1f} s" if found.duration_s is not None else "",
                 "by": found.created_by.username, "when": found.created_at}
        return {"key": key, "attempt": found, "title": f"Attempt #{found.pk}", "src": attempt_image_url(found),
                "facts": facts, "error": error, "parent_key": parent.key,
                "can_pick": status == ImageAttempt.Status.DONE and bool(found.image)}
    image = selectors.item_image(item, int(raw))
    if image is None:
        raise studio.StudioError(f"Image #{raw} is not an image of item {item.external_id}.", 404)
    facts = {"size": f"{image.width}×{image.height}", "by": image.uploaded_by.username if image.uploaded_by else "",
             "when": image.created_at, "mode": f"library image ({image.get_source_display().lower()})"}
    return {"key": key, "image": image, "title": f"Library image “{image.title}”", "src": _image_url(image),
            "facts": facts, "error": "", "parent_key": "", "can_pick": False}


@roles_allowed(CURATOR, ADMIN)
@require_safe
def compare(request, item_id: int):
    """Two images of an item side by side (`a` and `b`: attempt:<id> or image:<id>; `b` defaults to `a`'s
    parent), their settings with the differences marked, and an overlay to fade from one to the other."""
    item = _item_or_404(item_id)
    try:
        left = _side(item, request.GET.get("a", ""))
        right_key = request.GET.get("b", "") or left["parent_key"]
        if not right_key:
            raise studio.StudioError(f"{left['title']} has no parent: choose a second image to compare with.")
        right = _side(item, right_key)
    except studio.StudioError as exc:
        return render(request, "frontend/studio_compare.html", {"item": item, "error": exc.message},
                      status=exc.status)
    rows = []
    for label, name in COMPARED_FIELDS:
        a, b = left["facts"].get(name, ""), right["facts"].get(name, "")
        if a == "" and b == "":
            continue
        rows.append({"label": label, "a": a, "b": b, "differs": a != b, "is_time": name == "when"})
    back_slot = (left.get("attempt") or right.get("attempt"))
    return render(request, "frontend/studio_compare.html", {
        "item": item, "left": left, "right": right, "rows": rows,
        "back_slot": back_slot.slot if back_slot else (studio.image_slots(item) or [""])[0],
        "frozen": item.version.frozen,
    })
