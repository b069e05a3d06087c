"""Query filters of the crowd engine's API: studies, submissions (also a study's review queue) and a
worker's own claims (`config.api_filters`). Who may read the rows is the views' rule; the filters only
narrow what the caller may already see."""

from django.conf import settings
from django_filters import rest_framework as filters

from annotation.crowd import kinds, review
from annotation.crowd.models import Claim, Study, StudyItem, Submission
from config.api_filters import BooleanFilter, after, before


def step_kinds() -> list[tuple[str, str]]:
    return [(name, name) for name in kinds.names()]




def _queue(default: str) -> filters.ChoiceFilter:
    """`?queue=`; `default` says what the list shows without one."""
    return filters.ChoiceFilter(
        choices=[(name, name) for name in review.QUEUES], method="in_queue",
        help_text=f"a review queue: gold (gold and attention items), expert_sample or all{default}")


def _state(default: str) -> filters.ChoiceFilter:
    """`?state=` (of the submission's claim); `default` says what the list shows without one."""
    return filters.ChoiceFilter(choices=[(name, name) for name in review.STATES], method="in_state",
                                help_text=f"pending (awaiting a decision), approved or rejected{default}")


class StudyFilter(filters.FilterSet):
    state = filters.ChoiceFilter(choices=Study.State.choices)
    step_kind = filters.ChoiceFilter(choices=step_kinds, help_text="the study's kind: form or a benchmark workflow")
    language = filters.ChoiceFilter(choices=settings.LANGUAGES, help_text="the language of its worker pages")
    recruitment_platform = filters.ChoiceFilter(choices=Study.Recruitment.choices)
    created_after = after("created_at", "studies created")
    created_before = before("created_at", "studies created")

    class Meta:
        model = Study
        fields = ["state", "step_kind", "language", "recruitment_platform", "created_after", "created_before"]


class SubmissionFilter(filters.FilterSet):
    study = filters.ModelChoiceFilter(field_name="claim__study", to_field_name="slug", queryset=Study.objects.all(),
                                      help_text="the study's slug")
    queue = _queue("")
    state = _state("")
    review_state = filters.ChoiceFilter(choices=Submission.Review.choices,
                                        help_text="whether it was sampled for review, and the decision")
    worker = filters.CharFilter(field_name="claim__worker__username", help_text="the worker's username")
    item = filters.CharFilter(field_name="claim__item__external_id", help_text="the item's external id")
    item_role = filters.ChoiceFilter(field_name="claim__item__role", choices=StudyItem.Role.choices)
    check_passed = BooleanFilter(help_text="the result of a gold or attention item")
    submitted_after = after("submitted_at", "submissions handed in")
    submitted_before = before("submitted_at", "submissions handed in")

    class Meta:
        model = Submission
        fields = ["study", "queue", "state", "review_state", "worker", "item", "item_role", "check_passed",
                  "submitted_after", "submitted_before"]

    def in_queue(self, queryset, name, value: str):
        return queryset.filter(review.QUEUES[value])

    def in_state(self, queryset, name, value: str):
        return queryset.filter(review.STATES[value])


class StudyQueueFilter(SubmissionFilter):
    """A study's review queue: every submission's queue (`all`) and those awaiting a decision (`pending`)
    unless asked otherwise; `?state=` (empty) lists every state."""

    DEFAULTS = {"queue": "all", "state": "pending"}

    study = None
    queue = _queue("; all when not given")
    state = _state("; pending when not given, every state when empty (`?state=`)")

    class Meta(SubmissionFilter.Meta):
        fields = [name for name in SubmissionFilter.Meta.fields if name != "study"]

    def __init__(self, data=None, *args, **kwargs):
        data = data.copy() if data is not None else {}
        for name, default in self.DEFAULTS.items():
            data.setdefault(name, default)
        super().__init__(data, *args, **kwargs)


def _claimed_studies(request):
    """The studies the caller has claimed in: another slug is refused alike, existing or not."""
    return Study.objects.filter(claims__worker=request.user).distinct() if request else Study.objects.none()


class ClaimFilter(filters.FilterSet):
    study = filters.ModelChoiceFilter(field_name="study", to_field_name="slug", queryset=_claimed_studies,
                                      help_text="the slug of a study the caller has claimed items in")
    status = filters.ChoiceFilter(choices=Claim.Status.choices)
    claimed_after = after("claimed_at", "claims made")
    claimed_before = before("claimed_at", "claims made")

    class Meta:
        model = Claim
        fields = ["study", "status", "claimed_after", "claimed_before"]
