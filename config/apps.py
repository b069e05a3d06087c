from django.apps import AppConfig


class PlatformConfig(AppConfig):
    """The project package itself, installed so that its system checks are registered."""

    name = "config"
    verbose_name = "Platform configuration"

    def ready(self):
        from django.apps import apps
        from django.contrib.auth.signals import user_login_failed
        from django.db.models.signals import pre_delete

        from config import checks  # noqa: F401  (registers the deployment checks)
        from config.login_throttle import count_failure
        from config.state import StateMachine, protect_history

        user_login_failed.connect(count_failure, dispatch_uid="config.login_throttle.count_failure")
        for model in apps.get_models():  # every model with a declared workflow keeps its history
            if isinstance(getattr(model, "STATES", None), StateMachine):
                pre_delete.connect(protect_history, sender=model,
                                   dispatch_uid=f"config.state.protect:{model._meta.label}")
