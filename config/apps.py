from django.apps import AppConfig


class PlatformConfig(AppConfig):
    """The project package itself, installed so that its system checks are registered and its shared
    records (the state history, `config.models`) have a home below the three layers."""

    name = "config"
    verbose_name = "Platform configuration"

    def ready(self):
        from django.contrib.auth.signals import user_login_failed
        from django.urls import register_converter

        from config import checks  # noqa: F401  (registers the deployment checks)
        from config.ids import IdConverter
        from config.login_throttle import count_failure

        user_login_failed.connect(count_failure, dispatch_uid="config.login_throttle.count_failure")
        # `<id:pk>` in the URL modules: registered once, before any is read (and however often they are read)
        register_converter(IdConverter, "id")
