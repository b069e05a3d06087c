from django.apps import AppConfig


class FrontendConfig(AppConfig):
    name = "frontend"
    verbose_name = "Front end"

    def ready(self):
        from frontend import benchmarks

        benchmarks.discover()  # every package under frontend/benchmarks/ registers its pages and navigation
