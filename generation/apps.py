from django.apps import AppConfig


class GenerationConfig(AppConfig):
    name = "generation"
    verbose_name = "Generation and background jobs"

    def ready(self):
        from generation import proposals, tasks  # noqa: F401  (the proposal job kinds; the Celery task that runs jobs)
