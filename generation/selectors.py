"""Read paths of the jobs pages and API: the querysets they show."""

from config.roles import STAFF_ROLES, has_role
from generation.models import Job


def visible_jobs(user):
    """Curators, researchers and admins see every job; anyone else only the jobs they asked for."""
    queryset = Job.objects.select_related("requested_by")
    return queryset if has_role(user, *STAFF_ROLES) else queryset.filter(requested_by=user)


def jobs_of_kind(kind: str):
    """The jobs of one kind, with who asked for them."""
    return Job.objects.filter(kind=kind).select_related("requested_by")
