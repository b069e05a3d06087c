from django.apps import AppConfig


class EvaluationConfig(AppConfig):
    name = "evaluation"
    verbose_name = "Evaluation"

    def ready(self):
        from evaluation import tasks  # noqa: F401  (registers the evaluation_run job kind and chunk task)
