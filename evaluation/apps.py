from django.apps import AppConfig


class EvaluationConfig(AppConfig):
    name = "evaluation"
    verbose_name = "Evaluation"

    def ready(self):
        from evaluation import exports, tasks  # noqa: F401  (register the export and evaluation_run job kinds)
