"""`manage.py maia_categories`: MAIA's 12 reasoning categories as data (seeds/004 App. A.1).

    manage.py maia_categories list      # key, English and Italian names, release names, who edited last
    manage.py maia_categories ensure    # make the missing categories from the paper's defaults

`ensure` never changes a category that exists (curators' edits stay); `list` makes the missing ones
first, as the page `/maia/categories/` does. Edits are made on `/maia/categories/<key>/`.
"""

from django.core.management.base import BaseCommand

from annotation.benchmarks.maia import categories


class Command(BaseCommand):
    help = "List MAIA's reasoning categories, or make the missing ones from the paper's defaults."

    def add_arguments(self, parser):
        parser.add_argument("action", choices=["list", "ensure"])

    def handle(self, **options):
        before = categories.existing_keys()
        rows = categories.ensure_categories()
        if options["action"] == "ensure":
            made = [row.key for row in rows if row.key not in before]
            self.stdout.write(f"{len(rows)} MAIA categories; made {len(made)}"
                              + (f": {', '.join(made)}." if made else "."))
            return
        for row in rows:
            instructions = row.instructions or {}
            edited = f"edited by {row.updated_by}" if row.updated_by else "defaults"
            self.stdout.write(f"{row.key}\t{row.name}\t{instructions.get('name_it', '')}\t"
                              f"{', '.join(instructions.get('release_names', []))}\t{edited}")
