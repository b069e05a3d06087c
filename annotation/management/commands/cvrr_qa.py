"""`manage.py cvrr_qa`: CVRR-ES QA generation and filtration on the command line (the pages are
`/cvrr/qa/` and `/cvrr/qa/noise/`).

- `videos`: the captioned videos, with how many pairs were proposed and kept for each.
- `generate --items ID [ID ...] --user NAME --backend B --model M [--pairs N ...]`: QA proposals for
  these videos (`annotation.benchmarks.cvrr.qa_generation.start_qa_generation`); the job runs on the workers.
- `filtration --set ID --user NAME [--reviewers K]`: a filtration study over the set's pairs.
- `record --study SLUG --user NAME`: the study's new answers recorded as decisions (kept and fixed
  pairs join the QA pool).
- `return --item ID --reason TEXT --user NAME`: send a kept pair back to filtration.
- `noise [--set ID] [--json]`: the noise report per dimension.
"""

import json

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from annotation.benchmarks.cvrr import filtration, qa_console, qa_generation
from annotation.benchmarks.cvrr.noise_report import noise_report
from annotation.crowd.errors import CrowdError
from annotation.management.commands._model_options import add_model_arguments, registered_model
from config.roles import ADMIN, CURATOR, has_role
from generation.proposals import ProposalError


def _percent(value) -> str:
    return "—" if value is None else f"{100 * value:.1f}%"


class Command(BaseCommand):
    help = "CVRR-ES QA pairs: list captioned videos, generate pairs, open and record filtration, noise report."

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="action", required=True)
        sub.add_parser("videos", help="the captioned videos and their pairs")
        generate = sub.add_parser("generate", help="QA proposals for captioned videos (a proposal set and its job)")
        generate.add_argument("--items", type=int, nargs="+", required=True, help="the videos' item ids")
        add_model_arguments(generate)
        generate.add_argument("--pairs", type=int, default=qa_generation.DEFAULT_PAIRS, help="pairs per video")
        study = sub.add_parser("filtration", help="a filtration study over a set's pairs")
        study.add_argument("--set", type=int, required=True, dest="proposal_set")
        study.add_argument("--user", required=True)
        study.add_argument("--reviewers", type=int, default=1, help="reviewers per pair")
        study.add_argument("--name", default="")
        record = sub.add_parser("record", help="record a filtration study's new answers as decisions")
        record.add_argument("--study", required=True, help="the study's slug")
        record.add_argument("--user", required=True)
        back = sub.add_parser("return", help="send a kept pair back to filtration")
        back.add_argument("--item", type=int, required=True, help="the kept pair's item id")
        back.add_argument("--reason", required=True)
        back.add_argument("--user", required=True)
        noise = sub.add_parser("noise", help="the noise report per dimension")
        noise.add_argument("--set", type=int, default=None, dest="proposal_set", help="one proposal set")
        noise.add_argument("--json", action="store_true", help="print the report as JSON")

    def handle(self, **options):
        action = options["action"]
        try:
            getattr(self, f"_{action}")(options)
        except (ProposalError, CrowdError) as exc:
            raise CommandError(getattr(exc, "message", None) or str(exc)) from None

    def _user(self, options, *, curator: bool = True):
        user = get_user_model().objects.filter(username=options["user"]).first()
        if user is None:
            raise CommandError(f"No user {options['user']!r}.")
        if curator and not has_role(user, CURATOR, ADMIN):
            raise CommandError(f"{user.username} is no curator or admin.")
        return user

    def _set(self, pk):
        found = qa_console.proposal_set(pk)
        if found is None:
            raise CommandError(f"No CVRR-ES QA proposal set {pk}.")
        return found

    def _videos(self, options):
        rows = qa_console.videos()
        for row in rows:
            item = row.record.item
            self.stdout.write(f"#{item.pk} {item.payload.get('dimension')}/{item.payload.get('video_id')} "
                              f"[{item.version.label}]: {row.proposed} pair(s) proposed, {row.kept} kept")
        self.stdout.write(f"{len(rows)} captioned video(s)")

    def _generate(self, options):
        user = self._user(options)
        if options["max_new_tokens"] is not None and options["max_new_tokens"] < 1:
            raise CommandError("--max-new-tokens must be at least 1.")
        proposal_set = qa_generation.start_qa_generation(
            options["items"], user=user, **registered_model(options), batch_size=options["batch_size"],
            pairs=options["pairs"],
            params={"max_new_tokens": options["max_new_tokens"]} if options["max_new_tokens"] else None,
            name=options["name"])
        count = proposal_set.proposals.count()
        self.stdout.write(f"Proposal set {proposal_set.pk} ({count} video(s)): job {proposal_set.job_id} queued")

    def _filtration(self, options):
        user = self._user(options)
        proposal_set = self._set(options["proposal_set"])
        made = filtration.create_filtration_study(
            qa_console.set_proposals(proposal_set), curator=user, k=options["reviewers"],
            name=options["name"] or f"Filtration: {proposal_set.name}"[:200])
        self.stdout.write(f"Study {made.study.slug}: {len(made.items)} pair(s) to filter, "
                          f"{len(made.excluded)} left out")
        for proposal_id, why in sorted(made.excluded.items()):
            self.stdout.write(f"  proposal {proposal_id}: {why}")

    def _record(self, options):
        user = self._user(options)
        study = qa_console.study(options["study"])
        if study is None:
            raise CommandError(f"No study {options['study']!r}.")
        report = filtration.record_decisions(study, user=user)
        self.stdout.write(f"{len(report['applied'])} decision(s) recorded, {report['already']} already, "
                          f"{len(report['waiting'])} waiting for an expert, {len(report['skipped'])} rejected in "
                          f"review, {len(report['invalid'])} invalid")
        for submission_id, why in sorted(report["invalid"].items()):
            self.stdout.write(f"  submission {submission_id}: {why}")

    def _return(self, options):
        user = self._user(options)
        item = qa_console.kept_item(options["item"])
        if item is None:
            raise CommandError(f"Item {options['item']} is no CVRR-ES QA pair kept in filtration.")
        added = filtration.return_to_filtration(item, options["reason"], user)
        where = f"study {added.study.slug}" if added is not None else "the study that already reviews it"
        self.stdout.write(f"Pair #{item.pk} sent back to filtration ({where})")

    def _noise(self, options):
        proposal_set = self._set(options["proposal_set"]) if options["proposal_set"] is not None else None
        report = noise_report(proposal_set)
        if options["json"]:
            self.stdout.write(json.dumps(report, indent=2, ensure_ascii=False))
            return
        header = ["dimension", "proposed", "kept", "fixed", "removed",
                  *[label for _, label in report["reasons"]], "removed %", "fixed %", "noisy %"]
        self.stdout.write(" | ".join(header))
        for row in [*report["dimensions"], report["total"]]:
            self.stdout.write(" | ".join(str(value) for value in [
                row["dimension"], row["proposed"], row["kept"], row["fixed"], row["removed"],
                *[n for _, n in row["removed_reasons"]], _percent(row["removed_share"]),
                _percent(row["fixed_share"]), _percent(row["noisy_share"])]))
