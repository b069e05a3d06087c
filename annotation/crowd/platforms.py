"""Entry links from crowd platforms (Prolific, Amazon Mechanical Turk).

A platform sends a worker to a study link carrying the worker's platform id and a few ids of the
run. The worker gets (or gets back) an account of their own, without a password: the username is
`prolific-<PROLIFIC_PID>` or `mturk-<workerId>`, the account is an annotator and its WorkerProfile
records the platform and the platform's id. The ids of the run are kept in the session, per study,
so the completion page can send the worker back (MTurk's externalSubmit needs assignmentId and
turkSubmitTo).

An entry link only ever logs in accounts made by an entry link of the same platform: it never
logs in a local account, and never one that holds more than the annotator role.

A study says where it recruits (`Study.recruitment_platform`, `Study.platform_study_id`): a link of
another platform, or of another Prolific study (STUDY_ID) or MTurk HIT (hitId, where the study
names one), is 404 and creates nothing. Entry links are rate-limited per client address
(`CROWD_ENTRY_RATE_LIMIT` links per `CROWD_ENTRY_RATE_WINDOW` seconds; 429 beyond).

A worker id is not a secret, so entry is bound to what the platform issued for the run (`bind`,
`PlatformEntry`): the first link of a worker to a run records its session id (Prolific's SESSION_ID,
MTurk's assignmentId); the same session comes back in (a refresh, a closed tab, the link opened again),
another session with the same worker id is refused with a page saying so (409), before anyone is signed
in. A run is a study of ours on Prolific (it is one Prolific study: STUDY_ID is checked) and a HIT on
MTurk (a worker holds one assignment per HIT), so a returning worker's genuine new session is their
first link to another study, or to another HIT of the same study. Since such a first link cannot be told
from a made-up one, a sign-in by link reaches only the work of the links it came through (`reach`,
`check_reach`, `reachable_claims`): the studies this browser session entered, and on MTurk only the
claims made under the assignment it entered with (an item left open under another assignment is given
back when a new one enters, `enter`). A worker's earlier answers stay out of reach of any other session.
"""

import re
import time
from dataclasses import asdict, dataclass, field
from urllib.parse import urlsplit

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.cache import cache
from django.db import IntegrityError, transaction
from django.db.models import F, Q
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from annotation.crowd import assignment
from annotation.crowd.errors import CrowdError
from annotation.crowd.models import Claim, PlatformEntry, Study, WorkerProfile
from config.client_address import client_address
from config.roles import ANNOTATOR, user_roles

PROLIFIC = WorkerProfile.Platform.PROLIFIC
MTURK = WorkerProfile.Platform.MTURK

MTURK_PREVIEW_ASSIGNMENT = "ASSIGNMENT_ID_NOT_AVAILABLE"
# Where MTurk may send workers back to; anything else in turkSubmitTo is refused.
MTURK_SUBMIT_HOSTS = {"www.mturk.com", "workersandbox.mturk.com"}
DEFAULT_MTURK_SUBMIT_TO = "https://www.mturk.com"

_ID = re.compile(r"^[A-Za-z0-9_-]{1,100}$")
SESSION_KEY = "crowd_platform"
BACKEND = "django.contrib.auth.backends.ModelBackend"


class EntryError(CrowdError):
    """A platform link with missing or malformed parameters."""

    status = 400


class SessionTaken(CrowdError):
    """A link with a worker id whose run was entered from another session (409)."""

    status = 409
    title = gettext_lazy("Started from another session")


@dataclass
class Visit:
    """What a platform link said about the worker and the run."""

    platform: str
    worker_id: str = ""
    ids: dict = field(default_factory=dict)  # the platform's own names, e.g. {"STUDY_ID": ...}
    preview: bool = False

    @property
    def username(self) -> str:
        return f"{self.platform}-{self.worker_id}"

    @property
    def assignment_id(self) -> str:
        return self.ids.get("assignmentId", "") if self.platform == MTURK else ""

    @property
    def session_id(self) -> str:
        """What the platform issued for this worker's run: Prolific's SESSION_ID, MTurk's assignmentId."""
        return self.ids.get("SESSION_ID", "") if self.platform == PROLIFIC else self.assignment_id

    @property
    def run(self) -> str:
        """The run a session belongs to, beside the study: MTurk's HIT; a Prolific study is one run."""
        return self.ids.get("hitId", "") if self.platform == MTURK else ""

    @property
    def platform_label(self) -> str:
        return WorkerProfile.Platform(self.platform).label

    def as_session(self) -> dict:
        return asdict(self)


def _read(params, names: list[str], platform_label: str) -> dict:
    missing = [name for name in names if not (params.get(name) or "").strip()]
    if missing:
        raise EntryError(f"This {platform_label} link is incomplete: it lacks {', '.join(missing)}. "
                         f"Please open the study again from {platform_label}.")
    values = {name: params[name].strip() for name in names}
    bad = [name for name, value in values.items() if not _ID.match(value)]
    if bad:
        raise EntryError(f"This {platform_label} link is not valid: {', '.join(bad)} has unexpected characters.")
    return values


def parse_prolific(params) -> Visit:
    """`?PROLIFIC_PID=…&STUDY_ID=…&SESSION_ID=…`, all three required."""
    values = _read(params, ["PROLIFIC_PID", "STUDY_ID", "SESSION_ID"], "Prolific")
    return Visit(platform=PROLIFIC, worker_id=values.pop("PROLIFIC_PID"), ids=values)


def mturk_submit_base(value: str) -> str:
    """turkSubmitTo, checked: https on one of MTurk's own hosts, nothing else."""
    parts = urlsplit((value or "").strip())
    if parts.scheme != "https" or parts.hostname not in MTURK_SUBMIT_HOSTS or parts.username or parts.port:
        raise EntryError("This Mechanical Turk link is not valid: turkSubmitTo must be https://www.mturk.com "
                         "or https://workersandbox.mturk.com.")
    return f"https://{parts.hostname}"


def parse_mturk(params) -> Visit:
    """`?assignmentId=…&hitId=…&workerId=…&turkSubmitTo=…`; a preview has only assignmentId (and hitId)."""
    assignment = (params.get("assignmentId") or "").strip()
    if not assignment:
        raise EntryError("This Mechanical Turk link is incomplete: it lacks assignmentId. "
                         "Please open the HIT again from Mechanical Turk.")
    if assignment == MTURK_PREVIEW_ASSIGNMENT:
        return Visit(platform=MTURK, preview=True, ids={"hitId": (params.get("hitId") or "").strip()[:100]})
    values = _read(params, ["workerId", "assignmentId", "hitId"], "Mechanical Turk")
    if not (params.get("turkSubmitTo") or "").strip():
        raise EntryError("This Mechanical Turk link is incomplete: it lacks turkSubmitTo. "
                         "Please open the HIT again from Mechanical Turk.")
    values["turkSubmitTo"] = mturk_submit_base(params.get("turkSubmitTo", ""))
    return Visit(platform=MTURK, worker_id=values.pop("workerId"), ids=values)


def admit(request) -> None:
    """429 when the client's address (`config.client_address`) has opened more than
    `CROWD_ENTRY_RATE_LIMIT` entry links in the current window."""
    limit, window = settings.CROWD_ENTRY_RATE_LIMIT, max(1, settings.CROWD_ENTRY_RATE_WINDOW)
    if limit <= 0:
        return
    address = client_address(request)
    key = f"crowd-entry:{address}:{int(time.time() // window)}"
    cache.add(key, 0, timeout=window)
    try:
        count = cache.incr(key)
    except ValueError:  # the window ended between add and incr
        cache.set(key, 1, timeout=window)
        count = 1
    if count > limit:
        raise CrowdError(_("Too many study links were opened from your network just now. Please wait a minute "
                           "and open the link again."), status=429)


def recruiting(study: Study, platform: str) -> None:
    """404 unless the study recruits on `platform`."""
    if study.recruitment_platform != platform:
        raise CrowdError(_("There is no such study."), status=404)


def check_run(study: Study, visit: Visit) -> None:
    """404 unless the link belongs to the study's run on its platform: Prolific's STUDY_ID always,
    MTurk's hitId where the study names its HIT."""
    recruiting(study, visit.platform)
    given = visit.ids.get("STUDY_ID" if visit.platform == PROLIFIC else "hitId", "")
    if study.platform_study_id and given != study.platform_study_id:
        raise CrowdError(_("There is no such study."), status=404)


def worker_for(visit: Visit):
    """The worker account of a platform visit, made on the first visit."""
    User = get_user_model()
    profile = WorkerProfile.objects.filter(platform=visit.platform, platform_worker_id=visit.worker_id).select_related(
        "user").first()
    if profile is not None:
        user = profile.user
    else:
        user = User.objects.filter(username=visit.username).first()
        if user is not None:
            # a local account that happens to carry this name: never log it in from a link
            raise CrowdError(_("This worker id cannot be used here. Please contact the study's researchers."),
                             status=403)
        user = _create(visit)
    _check_loginable(user)
    return user


def _create(visit: Visit):
    User = get_user_model()
    try:
        with transaction.atomic():
            user = User(username=visit.username)
            user.set_unusable_password()
            user.save()
            user.groups.add(Group.objects.get(name=ANNOTATOR))
            WorkerProfile.objects.update_or_create(
                user=user, defaults={"platform": visit.platform, "platform_worker_id": visit.worker_id})
    except IntegrityError:
        # the same worker opened the link twice at once: the other request made the account
        profile = WorkerProfile.objects.select_related("user").get(platform=visit.platform,
                                                                   platform_worker_id=visit.worker_id)
        return profile.user
    return user


def _check_loginable(user) -> None:
    if not user.is_active:
        raise CrowdError(_("This worker account is disabled."), status=403)
    if user.is_staff or user.is_superuser or user.has_usable_password() or user_roles(user) != {ANNOTATOR}:
        raise CrowdError(_("This worker id cannot be used here. Please contact the study's researchers."),
                         status=403)


def bind(study: Study, visit: Visit, user) -> PlatformEntry:
    """The worker's entry to the study's run, bound to the session of their first link to it (see the module
    docstring); SessionTaken (409, counted on the entry) for a link with another session."""
    key = {"platform": visit.platform, "platform_worker_id": visit.worker_id, "study": study, "run": visit.run}
    try:
        with transaction.atomic():
            entry, created = PlatformEntry.objects.get_or_create(
                **key, defaults={"session_id": visit.session_id, "worker": user})
    except IntegrityError:  # the same worker's first link opened twice at once
        entry, created = PlatformEntry.objects.get(**key), False
    if entry.session_id != visit.session_id or entry.worker_id != user.pk:
        PlatformEntry.objects.filter(pk=entry.pk).update(refused_entries=F("refused_entries") + 1)
        raise SessionTaken(_(
            "This study was already started from another %(platform)s session with this worker id. To protect "
            "the work done in it, this link does not open it. Please open the study again from your own "
            "%(platform)s session; if you believe this is a mistake, contact the study's researchers.")
            % {"platform": visit.platform_label})
    if not created:
        entry.save(update_fields=["last_entry_at"])
    return entry


def enter(study: Study, visit: Visit, user) -> PlatformEntry:
    """Bind the entry (`bind`); on MTurk, give back the worker's item still open in this study under another
    assignment, which this session does not reach."""
    entry = bind(study, visit, user)
    if visit.platform == MTURK:
        for claim in Claim.objects.filter(study=study, worker=user, status=Claim.Status.ACTIVE).exclude(
                platform_assignment_id__in=("", visit.assignment_id)):
            assignment.release(claim, user, reason="given back: the worker came back on another assignment")
    return entry


def reach(request) -> dict[str, Visit] | None:
    """The runs a platform worker's browser session entered by link, by study slug; None when the signed-in
    account is no platform worker's (its reach is not limited)."""
    user = request.user
    if not user.is_authenticated:
        return None
    profile = WorkerProfile.objects.filter(user=user).only("platform", "platform_worker_id").first()
    if profile is None or profile.platform not in (PROLIFIC, MTURK):
        return None
    runs = {}
    for slug in request.session.get(SESSION_KEY) or {}:
        visit = recalled(request.session, slug)
        if (visit is not None and not visit.preview and visit.platform == profile.platform
                and visit.worker_id == profile.platform_worker_id):
            runs[slug] = visit
    return runs


def check_reach(request, study: Study) -> None:
    """403 for a platform worker's session that did not enter this study by link."""
    runs = reach(request)
    if runs is not None and study.slug not in runs:
        raise CrowdError(_("This study was not opened from its link in this browser. Please open it from the "
                           "platform you are working on."), status=403)


def reachable_claims(request, claims):
    """`claims` narrowed to what the session reaches (`narrow` over `reach`)."""
    return narrow(claims, reach(request))


def narrow(claims, runs: dict[str, Visit] | None):
    """`claims` narrowed to what a session with these runs reaches: the claims of the studies it entered (on
    MTurk, those made under the assignment it entered with); with no runs to hold to (None), all of them."""
    if runs is None:
        return claims
    allowed = Q(pk__in=[])
    for slug, visit in runs.items():
        allowed |= (Q(study__slug=slug, platform_assignment_id=visit.assignment_id) if visit.platform == MTURK
                    else Q(study__slug=slug))
    return claims.filter(allowed)


def session_assignment(request, study: Study) -> str:
    """The MTurk assignment this browser session entered the study with, or ""."""
    visit = (reach(request) or {}).get(study.slug)
    return visit.assignment_id if visit is not None else ""


def remember(session, slug: str, visit: Visit) -> None:
    """Keep the platform ids of this study's run in the session."""
    runs = dict(session.get(SESSION_KEY) or {})
    runs[slug] = visit.as_session()
    session[SESSION_KEY] = runs


def recalled(session, slug: str) -> Visit | None:
    data = (session.get(SESSION_KEY) or {}).get(slug)
    if not data:
        return None
    return Visit(platform=data.get("platform", ""), worker_id=data.get("worker_id", ""),
                 ids=dict(data.get("ids") or {}), preview=bool(data.get("preview")))


def completion_url(study) -> str:
    """The study's completion link (e.g. Prolific's `…/submissions/complete?cc=CODE`), if it is a safe http(s) URL."""
    url = (study.completion_url or "").strip()
    return url if urlsplit(url).scheme in ("http", "https") else ""
