from django.apps import AppConfig


class EvaluationConfig(AppConfig):
    name = "evaluation"
    verbose_name = "Evaluation"

    def ready(self):
        from annotation import demo, versions
        from evaluation import benchmarks, exports, prediction_import_jobs, result_actions, tasks  # noqa: F401  (register the job kinds)
        from evaluation.demo import seed_demo_baselines, seed_demo_model_metrics, seed_demo_runs
        from evaluation.freeze_checks import requests_check

        # every module of evaluation/benchmarks/ registers its benchmark
        benchmarks.discover()
        # a version whose items cannot be turned into evaluation requests is never frozen
        versions.register_freeze_check(requests_check)
        # the demo's versions get a judged tiny-model run scored with the tiny scoring models, and the
        # model-free baselines, so that their results show numbers
        demo.register_demo_step(seed_demo_runs)
        demo.register_demo_step(seed_demo_model_metrics)
        demo.register_demo_step(seed_demo_baselines)
