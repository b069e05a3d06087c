"""`manage.py review_proposals`: hand a set of model proposals to a crowd review study, and record the
reviewers' answers as decisions (see `annotation.crowd.proposal_review`)."""

from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.core.management.base import BaseCommand, CommandError

from annotation.crowd import proposal_review
from annotation.crowd.errors import CrowdError
from annotation.crowd.models import Study
from generation.models import Proposal, ProposalSet


class Command(BaseCommand):
    help = "Create a review study over a proposal set (create), or record its reviewers' decisions (apply)."

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="action", required=True)
        create = sub.add_parser("create", help="a review study over the proposals of a set that parsed")
        create.add_argument("--set", type=int, required=True, dest="proposal_set", help="proposal set id")
        create.add_argument("--user", required=True, help="the curator creating the study")
        create.add_argument("--name", default="", help="study name (default: from the set)")
        create.add_argument("--slug", default=None)
        create.add_argument("--reviewers", type=int, default=1, help="reviewers per proposal (k)")
        apply = sub.add_parser("apply", help="record every new submission of a review study as a decision")
        apply.add_argument("--study", required=True, help="the review study's slug")
        apply.add_argument("--user", required=True, help="the curator applying the decisions")

    def handle(self, **options):
        user = get_user_model().objects.filter(username=options["user"]).first()
        if user is None:
            raise CommandError(f"No user {options['user']!r}.")
        try:
            if options["action"] == "create":
                self._create(user, options)
            else:
                self._apply(user, options)
        except (PermissionDenied, CrowdError) as exc:
            raise CommandError(str(exc) or "Only curators and admins review proposals.") from None

    def _create(self, user, options):
        proposal_set = ProposalSet.objects.filter(pk=options["proposal_set"]).first()
        if proposal_set is None:
            raise CommandError(f"No proposal set {options['proposal_set']}.")
        result = proposal_review.create_review_study(
            Proposal.objects.filter(proposal_set=proposal_set).order_by("pk"), curator=user,
            name=options["name"] or f"Review: {proposal_set.name}", slug=options["slug"],
            k=options["reviewers"])
        self.stdout.write(f"Study {result.study.slug}: {len(result.items)} proposals to review, "
                          f"{len(result.excluded)} left out")
        for proposal_id, why in sorted(result.excluded.items()):
            self.stdout.write(f"  proposal {proposal_id}: {why}")

    def _apply(self, user, options):
        study = Study.objects.filter(slug=options["study"]).first()
        if study is None:
            raise CommandError(f"No study {options['study']!r}.")
        report = proposal_review.apply_review_submissions(study, user=user)
        self.stdout.write(f"{len(report['applied'])} decisions recorded, {report['already']} already recorded, "
                          f"{len(report['waiting'])} waiting for an expert, {len(report['skipped'])} rejected in "
                          f"review, {len(report['invalid'])} invalid")
        for submission_id, why in sorted(report["invalid"].items()):
            self.stdout.write(f"  submission {submission_id}: {why}")
