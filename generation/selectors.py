"""Read paths of the jobs pages and API and of the proposals queue: the querysets they show."""

from django.db.models import Count, Q

from config.roles import STAFF_ROLES, has_role
from generation.models import Job, Proposal, ProposalSet


def visible_jobs(user):
    """Curators, researchers and admins see every job; anyone else only the jobs they asked for."""
    queryset = Job.objects.select_related("requested_by")
    return queryset if has_role(user, *STAFF_ROLES) else queryset.filter(requested_by=user)


def jobs_of_kind(kind: str):
    """The jobs of one kind, with who asked for them."""
    return Job.objects.filter(kind=kind).select_related("requested_by")


def queue_proposals(*, state: str = "", output: str = "", kind: str = "", model: str = ""):
    """The proposals queue, newest set first, each set's proposals in order, with their set, job and
    decisions; narrowed to an outcome (`state`), a parse status (`output`), a task kind and a model
    id when given."""
    found = (Proposal.objects.select_related("proposal_set", "proposal_set__job")
             .prefetch_related("decisions__decided_by")
             .order_by("-proposal_set__created_at", "-proposal_set_id", "pk"))
    if state:
        found = found.filter(outcome=state)
    if output:
        found = found.filter(status=output)
    if kind:
        found = found.filter(task_kind=kind)
    if model:
        found = found.filter(proposal_set__model_id=model)
    return found


def proposals_by_id(ids):
    """The proposals with these ids (unknown ids are simply absent)."""
    return Proposal.objects.filter(pk__in=list(ids)).order_by("pk")


def proposal(pk: int):
    """One proposal (DoesNotExist if there is none)."""
    return Proposal.objects.select_related("proposal_set").get(pk=pk)


def proposal_sets():
    """Every proposal set with its latest job, newest first."""
    return ProposalSet.objects.select_related("job")


def queue_choices() -> dict:
    """What the queue's filters offer: the task kinds and model ids that sets use."""
    sets = ProposalSet.objects.order_by()
    return {"kinds": sorted(set(sets.values_list("task_kind", flat=True))),
            "models": sorted(set(sets.values_list("model_id", flat=True)))}


def sets_with_counts(sets):
    """Proposal sets, newest first, each with how many of its outputs parsed (`ok`), did not parse
    (`unparsed`) and parsed but wait for a decision (`undecided`), and its job."""
    return (sets.select_related("job")
            .annotate(ok=Count("proposals", filter=Q(proposals__status=Proposal.Status.OK)),
                      unparsed=Count("proposals", filter=~Q(proposals__status__in=(Proposal.Status.OK,
                                                                                   Proposal.Status.PENDING))),
                      undecided=Count("proposals", filter=Q(proposals__status=Proposal.Status.OK,
                                                            proposals__outcome=Proposal.Outcome.UNDECIDED)))
            .order_by("-created_at", "-pk"))


# a proposal still being made, or made and waiting for a person's decision
WAITING = Q(status=Proposal.Status.PENDING) | Q(status=Proposal.Status.OK, outcome=Proposal.Outcome.UNDECIDED)


def waiting_proposals(kind: str, keys):
    """The proposals of kind `kind` with these source keys still being made or waiting for a decision."""
    return Proposal.objects.filter(task_kind=kind, source_key__in=list(keys)).filter(WAITING)


def waiting_keys(kind: str, keys) -> set[str]:
    """The source keys among `keys` whose proposal of kind `kind` is still being made or waits for a decision."""
    return set(waiting_proposals(kind, keys).values_list("source_key", flat=True))
