from django.apps import AppConfig


class GenerationConfig(AppConfig):
    name = "generation"
    verbose_name = "Generation and background jobs"

    def ready(self):
        from generation import proposals  # noqa: F401  (registers the proposal job kinds)
