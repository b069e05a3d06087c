"""Read paths of the crowd pages: the studies they show."""

from annotation.crowd.models import Study


def study_by_slug(slug: str) -> Study | None:
    return Study.objects.filter(slug=slug).first()


def studies_with_settings():
    """Studies with their required qualification and creator, as the study page shows them."""
    return Study.objects.select_related("required_qualification", "created_by")
