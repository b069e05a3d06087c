"""Settings, all read from the environment (see docs/deployment.md).

DEBUG is off unless the environment turns it on (DJANGO_DEBUG=true: `make demo` and the test
settings do); with it off, DJANGO_SECRET_KEY is required. Everything else has an embedded
default that needs no services: a SQLite file in the project folder and a file-system Celery
broker, so background jobs run in a worker process without Redis.
"""

from pathlib import Path

import dj_database_url
from csp.constants import NONE, SELF
from django.core.exceptions import ImproperlyConfigured

from config.env import env_bool, env_int, env_list, env_str

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(env_str("PLATFORM_VAR_DIR", str(BASE_DIR / "var")))

DEBUG = env_bool("DJANGO_DEBUG", False)

SECRET_KEY = env_str("DJANGO_SECRET_KEY")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured("DJANGO_SECRET_KEY must be set when DJANGO_DEBUG is off (its default). "
                                   "For development set DJANGO_DEBUG=true, as `make demo` does.")
    SECRET_KEY = "django-insecure-development-only-key-do-not-use-in-production"

ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]"] if DEBUG else [])
CSRF_TRUSTED_ORIGINS = env_list("DJANGO_CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_filters",
    "csp",
    "generation",
    "annotation",
    "evaluation",
    "frontend",
    "config.apps.PlatformConfig",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # the Content-Security-Policy below, on every response that passes here (pages, API, errors, media)
    "csp.middleware.CSPMiddleware",
    "config.middleware.RefuseOversizedBodiesMiddleware",
    "config.middleware.RefuseNulCharactersMiddleware",
    "config.middleware.RefuseUnknownQueryParametersMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "config.not_found.PlainNotFoundMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "frontend.context.navigation",
            ],
        },
    },
]

# --- Database -------------------------------------------------------------------------------
DATABASES = {
    "default": dj_database_url.parse(
        env_str("DATABASE_URL", f"sqlite:///{BASE_DIR / 'db.sqlite3'}"),
        conn_max_age=env_int("DATABASE_CONN_MAX_AGE", 0),
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # WAL lets the web process and the worker read while the other writes; IMMEDIATE
    # transactions take the write lock up front, so concurrent writers queue instead of failing.
    DATABASES["default"]["OPTIONS"] = {
        "timeout": 30,
        "transaction_mode": "IMMEDIATE",
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    }
# Prepared statements: a connection prepares what it runs again and again (the crowd work loop's
# statements, after 5 uses), so PostgreSQL stops parsing and planning them each time. Turn them
# off behind a transaction-pooling proxy such as PgBouncer, which cannot keep them.
elif DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql" and env_bool(
        "DATABASE_PREPARED_STATEMENTS", True):
    DATABASES["default"].setdefault("OPTIONS", {}).update({"server_side_binding": True, "prepare_threshold": 5})
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Auth -----------------------------------------------------------------------------------
# The first refuses throttled sign-ins (config.login_throttle); the second checks passwords.
AUTHENTICATION_BACKENDS = [
    "config.login_throttle.RefuseWhileThrottled",
    "django.contrib.auth.backends.ModelBackend",
]
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
# Failed logins (page and API token) per username and per client address in a window; 0 = no limit.
LOGIN_FAILURES_PER_USERNAME = env_int("LOGIN_FAILURES_PER_USERNAME", 10)
LOGIN_FAILURES_PER_ADDRESS = env_int("LOGIN_FAILURES_PER_ADDRESS", 50)
LOGIN_FAILURE_WINDOW_SECONDS = env_int("LOGIN_FAILURE_WINDOW_SECONDS", 15 * 60)
# Behind a proxy the client's address comes from the header it sets (deploy/nginx.conf: X-Real-IP).
CLIENT_ADDRESS_HEADER = env_str("CLIENT_ADDRESS_HEADER", "")
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en"
# The pages workers see are translated (locale/it); a study sets its language (annotation.crowd.language).
LANGUAGES = [("en", "English"), ("it", "Italiano")]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = env_str("TIME_ZONE", "UTC")
USE_I18N = True
USE_TZ = True

# --- Cache (login throttling counters, scored results) ----------------------------------------
# Unset: each process keeps its own in memory. In production point it at Redis so that every
# web process shares one set of counters.
CACHE_URL = env_str("CACHE_URL", "")
CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": CACHE_URL}
          if CACHE_URL else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

# --- Static and media -----------------------------------------------------------------------
STATIC_URL = "/static/"
STATIC_ROOT = Path(env_str("STATIC_ROOT", str(VAR_DIR / "static")))
# Media is never published under a URL: it is streamed by a view that checks permissions.
MEDIA_ROOT = Path(env_str("MEDIA_ROOT", str(VAR_DIR / "media")))
MEDIA_URL = "/media-not-public/"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"
        if not DEBUG
        else "django.contrib.staticfiles.storage.StaticFilesStorage"
    },
}
# In production nginx sends the file: the view answers with X-Accel-Redirect to this prefix.
MEDIA_ACCEL_REDIRECT_PREFIX = env_str("MEDIA_ACCEL_REDIRECT_PREFIX", "")
MEDIA_MAX_UPLOAD_MB = env_int("MEDIA_MAX_UPLOAD_MB", 512)
# `clean_media` removes stored files no row references once they are this old (annotation.media_cleanup).
MEDIA_ORPHAN_GRACE_SECONDS = env_int("MEDIA_ORPHAN_GRACE_SECONDS", 3600)
MEDIA_CLEAN_INTERVAL_SECONDS = env_int("MEDIA_CLEAN_INTERVAL_SECONDS", 3600)
DATA_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024
# Every JSON request body (API and pages) passes config.json_bodies: larger ones get 413, deeper ones 400.
JSON_BODY_MAX_BYTES = env_int("JSON_BODY_MAX_BYTES", DATA_UPLOAD_MAX_MEMORY_SIZE)
JSON_BODY_MAX_DEPTH = env_int("JSON_BODY_MAX_DEPTH", 64)
FILE_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024 * 1024
# A multipart body over the upload limit is refused before it is read, and a file past it as soon as it passes
# (config.uploads); then Django's own handlers keep small files in memory and larger ones in a temporary file.
FILE_UPLOAD_HANDLERS = [
    "config.uploads.CappedUploadHandler",
    "django.core.files.uploadhandler.MemoryFileUploadHandler",
    "django.core.files.uploadhandler.TemporaryFileUploadHandler",
]
# Files people bring (uploads, imports, the CLI): JSON and JSON Lines nested deeper are refused, naming the line
# (config.json_text); zip archives hold at most so many members and bytes once extracted (config.archives);
# tables (CSV, TSV, .xlsx) hold at most so many rows, characters a cell and megabytes (config.table_limits).
IMPORT_JSON_MAX_DEPTH = env_int("IMPORT_JSON_MAX_DEPTH", 128)
IMPORT_ZIP_MAX_MEMBERS = env_int("IMPORT_ZIP_MAX_MEMBERS", 10_000)
IMPORT_ZIP_MAX_MB = env_int("IMPORT_ZIP_MAX_MB", 2048)
IMPORT_TABLE_MAX_ROWS = env_int("IMPORT_TABLE_MAX_ROWS", 1_000_000)
IMPORT_TABLE_MAX_CELL_CHARS = env_int("IMPORT_TABLE_MAX_CELL_CHARS", 8 * 1024 * 1024)
IMPORT_TABLE_MAX_MB = env_int("IMPORT_TABLE_MAX_MB", 512)
MODEL_CACHE_DIR = Path(env_str("MODEL_CACHE_DIR", str(VAR_DIR / "models")))
# A local text-embedding model (a folder transformers' AutoModel loads, e.g. a sentence-embedding or NLI
# encoder): when set, the near-duplicate finder of written scenes also ranks by meaning (mean-pooled
# embeddings), beside its word n-gram TF-IDF similarity. Empty: lexical similarity only.
SCENE_EMBEDDING_MODEL = env_str("SCENE_EMBEDDING_MODEL", "")
# The NLI classifier the MAIA answer-pool checks use when none is named (a hub id or a local folder, e.g. a
# multilingual MNLI/XNLI model such as MoritzLaurer/mDeBERTa-v3-base-xnli-multilingual-nli-2mil7).
MAIA_NLI_MODEL = env_str("MAIA_NLI_MODEL", "")
# The environment variables a registered model (generation.model_registry) may name as its API key: an admin
# picks one of these on the entry, and nothing else is ever read as a key. Comma-separated names.
MODEL_KEY_VARIABLES = tuple(env_list("MODEL_KEY_VARIABLES", ["OPENAI_API_KEY"]))
# Stable Diffusion checkpoints (with their pipelines) kept loaded per worker process (generation.diffusion).
DIFFUSION_PIPELINE_CACHE_SIZE = env_int("DIFFUSION_PIPELINE_CACHE_SIZE", 2)

# --- Crowd platforms' entry links -----------------------------------------------------------
# At most CROWD_ENTRY_RATE_LIMIT entry links per client address and CROWD_ENTRY_RATE_WINDOW seconds
# (0 turns the limit off); behind a proxy, name the header that carries the client's address,
# e.g. HTTP_X_REAL_IP (deploy/nginx.conf sets X-Real-IP).
CROWD_ENTRY_RATE_LIMIT = env_int("CROWD_ENTRY_RATE_LIMIT", 30)
CROWD_ENTRY_RATE_WINDOW = env_int("CROWD_ENTRY_RATE_WINDOW", 60)

# --- REST API -------------------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.SessionAuthentication",
        "config.authentication.TokenAuthentication",
    ],
    # Every endpoint must declare its roles; an undeclared one refuses everybody.
    "DEFAULT_PERMISSION_CLASSES": ["config.permissions.HasRole"],
    "DEFAULT_PARSER_CLASSES": [
        "config.json_bodies.GuardedJSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    # Lists are narrowed by their FilterSets (django-filter); a value that does not parse is a 400.
    "DEFAULT_FILTER_BACKENDS": ["config.api_filters.ListFilterBackend"],
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": 50,
    # drf-spectacular's, plus each operation's refusals with the platform's error body
    "DEFAULT_SCHEMA_CLASS": "config.api_schema.AutoSchema",
    "EXCEPTION_HANDLER": "config.api_errors.exception_handler",
    # OPTIONS on any route: DRF's description of the view, also for views without a serializer
    "DEFAULT_METADATA_CLASS": "config.api_metadata.ApiMetadata",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Vision-language benchmark platform API",
    "DESCRIPTION": "Media, benchmark versions, background jobs; annotation and evaluation.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "SERVE_PERMISSIONS": ["rest_framework.permissions.IsAuthenticated"],
    # `check --deploy` checks the deployment alone; check the API schema with
    # `manage.py spectacular --validate --fail-on-warn --file /dev/null`.
    "ENABLE_DJANGO_DEPLOY_CHECK": False,
    # every route also answers with a format suffix (config.api_routes); the schema lists each route once
    "PREPROCESSING_HOOKS": ["drf_spectacular.hooks.preprocess_exclude_path_format"],
    # `<id:pk>` in addresses: the ids a bigint key can hold (config.ids.MIN_ID, MAX_ID)
    "PATH_CONVERTER_OVERRIDES": {"id": {"type": "integer", "minimum": 1, "maximum": 2**63 - 1}},
    # Choice sets shared by several fields, or with a name used twice, get one stable name each.
    "ENUM_NAME_OVERRIDES": {
        "BenchmarkSlugEnum": "annotation.benchmarks.registry.choices",  # the registered benchmarks
        "MediaSourceEnum": "annotation.models.MediaAsset.Source",
        "MediaStatusEnum": "annotation.models.MediaAsset.Status",
        "VersionSourceEnum": "annotation.models.BenchmarkVersion.Source",
        "JobStatusEnum": "generation.models.Job.Status",
        "ClaimStatusEnum": "annotation.crowd.models.Claim.Status",
    },
}

# --- Background jobs (Celery) ---------------------------------------------------------------
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL", "")
BROKER_DIR = VAR_DIR / "broker"
if not CELERY_BROKER_URL:
    # Embedded default: a file-system queue shared by the web process and the worker that
    # `make demo` starts. No Redis needed, and jobs still run outside the request.
    CELERY_BROKER_URL = "filesystem://"
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(BROKER_DIR / "queue"),
        "data_folder_out": str(BROKER_DIR / "queue"),
        "control_folder": str(BROKER_DIR / "control"),
        "store_processed": False,
    }
else:
    # Long GPU chunks must not be redelivered while they still run.
    CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": env_int("CELERY_VISIBILITY_TIMEOUT", 6 * 3600)}
CELERY_TASK_DEFAULT_QUEUE = "default"
CELERY_TASK_ROUTES = {}
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", False)
# A running evaluation chunk writes a heartbeat every EVAL_CHUNK_HEARTBEAT_SECONDS (from a thread, so
# a slow model batch does not silence it); beat re-queues a chunk silent for longer than
# EVAL_CHUNK_SILENT_AFTER_SECONDS, and fails it (and its run) once it was started EVAL_CHUNK_MAX_ATTEMPTS times.
EVAL_CHUNK_HEARTBEAT_SECONDS = env_int("EVAL_CHUNK_HEARTBEAT_SECONDS", 30)
EVAL_CHUNK_SILENT_AFTER_SECONDS = env_int("EVAL_CHUNK_SILENT_AFTER_SECONDS", 300)
EVAL_CHUNK_MAX_ATTEMPTS = env_int("EVAL_CHUNK_MAX_ATTEMPTS", 3)
EVAL_CHUNK_REQUEUE_EVERY_SECONDS = env_int("EVAL_CHUNK_REQUEUE_EVERY_SECONDS", 60)
# While a chunk's model calls are in flight, whether its run was cancelled is looked up this often (seconds,
# evaluation.cancel_watch): a cancelled run's API backend stops retrying and waiting within about this long.
EVAL_CANCEL_POLL_SECONDS = float(env_str("EVAL_CANCEL_POLL_SECONDS", "1"))
if EVAL_CHUNK_SILENT_AFTER_SECONDS < 2 * EVAL_CHUNK_HEARTBEAT_SECONDS:
    raise ImproperlyConfigured("EVAL_CHUNK_SILENT_AFTER_SECONDS must be at least twice EVAL_CHUNK_HEARTBEAT_SECONDS.")
CELERY_BEAT_SCHEDULE = {
    # Claims whose lease ran out go back to the pool (the next claim request also does this).
    "expire-claim-leases": {"task": "annotation.crowd.expire_leases", "schedule": 60.0},
    # Evaluation chunks whose worker went silent go back to the gpu queue (on every broker).
    "requeue-silent-chunks": {"task": "evaluation.requeue_silent_chunks",
                              "schedule": float(EVAL_CHUNK_REQUEUE_EVERY_SECONDS)},
}
# Files left by a process killed between storing a file and committing its row are removed.
CELERY_BEAT_SCHEDULE["clean-media"] = {"task": "annotation.clean_media",
                                       "schedule": float(MEDIA_CLEAN_INTERVAL_SECONDS)}
JOB_QUEUES = ("default", "generation", "gpu")

# --- Security (production: DJANGO_DEBUG=false) ----------------------------------------------
SESSION_COOKIE_SECURE = not DEBUG
CSRF_COOKIE_SECURE = not DEBUG
# Mechanical Turk shows tasks inside its own page (an iframe): cookies must then be SameSite=None
# (which browsers accept only with Secure, i.e. in production over HTTPS).
SESSION_COOKIE_SAMESITE = CSRF_COOKIE_SAMESITE = env_str("DJANGO_COOKIE_SAMESITE", "Lax")
if SESSION_COOKIE_SAMESITE not in ("Lax", "Strict", "None"):
    raise ImproperlyConfigured("DJANGO_COOKIE_SAMESITE must be Lax, Strict or None.")
if SESSION_COOKIE_SAMESITE == "None" and DEBUG:
    raise ImproperlyConfigured("DJANGO_COOKIE_SAMESITE=None needs secure cookies: set DJANGO_DEBUG=false.")
SECURE_SSL_REDIRECT = env_bool("DJANGO_SECURE_SSL_REDIRECT", not DEBUG)
SECURE_HSTS_SECONDS = env_int("DJANGO_HSTS_SECONDS", 0 if DEBUG else 31536000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = not DEBUG
SECURE_HSTS_PRELOAD = not DEBUG
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
# Content-Security-Policy (django-csp) on every response: scripts, styles, images, media and requests come from
# this site only, so an inline <script>, an inline event handler (onclick=…), a javascript: URL and an inline
# style do not run. Pages keep their code in frontend/static and pass data in data- attributes. A view that
# needs more says so itself (django-csp's csp_update / csp_replace decorators, config.content_security):
# the API docs (Swagger UI, Redoc), the crowd pages Mechanical Turk frames, SVG charts.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF],
        "img-src": [SELF],
        "media-src": [SELF],
        "font-src": [SELF],
        "connect-src": [SELF],
        "worker-src": [SELF],
        "frame-src": [NONE],
        "object-src": [NONE],
        "base-uri": [SELF],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
    },
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    # A refused request (403, 404) is logged as one line, without a traceback (config.log_filters).
    "filters": {"no_client_error_traceback": {"()": "config.log_filters.NoTracebackForClientErrors"}},
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    # httpx (the OpenAI-compatible backend) logs every request at INFO: one line per model call
    "loggers": {"django.db.backends": {"level": "WARNING"}, "httpx": {"level": "WARNING"},
                "django.request": {"filters": ["no_client_error_traceback"]}},
}
