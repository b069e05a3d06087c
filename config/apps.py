from django.apps import AppConfig


class PlatformConfig(AppConfig):
    """The project package itself, installed so that its system checks are registered."""

    name = "config"
    verbose_name = "Platform configuration"

    def ready(self):
        from config import checks  # noqa: F401  (registers the deployment checks)
