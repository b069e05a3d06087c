from django.core.management.base import BaseCommand

from annotation.demo import seed_demo


class Command(BaseCommand):
    help = "Create one demo user per role and import real sample media (safe to run again)."

    def handle(self, **options):
        result = seed_demo(say=self.stdout.write)
        self.stdout.write(self.style.SUCCESS("Demo logins (username / password):"))
        for username, password, role in result["logins"]:
            self.stdout.write(f"  {role:<11} {username} / {password}")
