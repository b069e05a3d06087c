from django.apps import AppConfig
from django.db.models.signals import post_migrate


class AnnotationConfig(AppConfig):
    name = "annotation"
    verbose_name = "Annotation, media and benchmark versions"

    def ready(self):
        from annotation import (  # noqa: F401  (job kinds; OpenAPI schema)
            decisions,
            image_studio_jobs,
            media_jobs,
            openapi,
            version_exports,
            versions,
        )
        from annotation.benchmarks import registry
        from annotation.bootstrap import on_post_migrate
        from annotation.crowd import access  # noqa: F401  (registers the workers' media grant)

        registry.discover()  # every package under annotation/benchmarks/ registers its benchmark
        # no version is frozen with an item whose latest human decision rejected it or sent it back
        versions.register_freeze_check(decisions.freeze_check, phrase=decisions.REFUSAL_PHRASE)
        # after every app's migrations, so that the role groups get the permissions of apps migrated later
        post_migrate.connect(on_post_migrate, dispatch_uid="annotation-bootstrap")
