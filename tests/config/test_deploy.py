"""The production configuration: Django's deployment checks, and the deploy/ files agreeing with the settings.

`manage.py check --deploy` runs in a subprocess, because the settings read the environment once,
at import time.
"""

import os
import re
import secrets
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from django.conf import settings

from config.env import TRUE_WORDS

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
COMPOSE_FILE = DEPLOY / "docker-compose.yml"
DOCKER_COMPOSE = "/usr/bin/docker-compose"
ON_CI = os.environ.get("CI", "").strip().lower() in TRUE_WORDS


def production_environment(tmp_path, **changes) -> dict[str, str]:
    """The documented production environment (deploy/.env.example), and nothing else from ours."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": os.environ.get("HOME", str(tmp_path)),
        "LANG": "C.UTF-8",
        "PLATFORM_VAR_DIR": str(tmp_path / "var"),
        "DJANGO_DEBUG": "false",
        "DJANGO_SECRET_KEY": secrets.token_urlsafe(64),
        "DJANGO_ALLOWED_HOSTS": "bench.example.org",
        "DATABASE_URL": "postgres://platform:secret@127.0.0.1:5432/platform",
        "CELERY_BROKER_URL": "redis://127.0.0.1:6379/0",
        "MEDIA_ACCEL_REDIRECT_PREFIX": "/protected",
    }
    env.update(changes)
    return {key: value for key, value in env.items() if value is not None}


def manage(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)


def compose() -> dict:
    return yaml.safe_load(COMPOSE_FILE.read_text())


# --- Django's deployment checks ---------------------------------------------------------------

def test_production_environment_passes_the_deployment_checks_without_a_warning(tmp_path):
    result = manage(production_environment(tmp_path), "check", "--deploy", "--fail-level", "WARNING")
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "System check identified no issues" in result.stdout, output
    assert "WARNING" not in output.upper()


def test_production_environment_is_the_documented_one(tmp_path):
    documented = (DEPLOY / ".env.example").read_text()
    for name in production_environment(tmp_path):
        if name in ("PATH", "HOME", "LANG"):
            continue
        assert re.search(rf"^#? ?{name}=", documented, re.MULTILINE), f"{name} is missing from deploy/.env.example"


@pytest.mark.parametrize(("missing", "warning"), [
    ("CELERY_BROKER_URL", "config.W001"),
    ("MEDIA_ACCEL_REDIRECT_PREFIX", "config.W002"),
])
def test_deployment_checks_warn_about_demo_only_defaults(tmp_path, missing, warning):
    result = manage(production_environment(tmp_path, **{missing: None}), "check", "--deploy", "--fail-level", "WARNING")
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert warning in output
    assert missing in output


def test_cookies_can_be_sent_inside_the_mechanical_turk_iframe(tmp_path):
    env = production_environment(tmp_path, DJANGO_COOKIE_SAMESITE="None")
    result = manage(env, "shell", "--no-imports", "-c", "from django.conf import settings as s; "
                    "print(s.SESSION_COOKIE_SAMESITE, s.CSRF_COOKIE_SAMESITE, s.SESSION_COOKIE_SECURE)")
    assert result.stdout.split() == ["None", "None", "True"], result.stdout + result.stderr
    assert manage(env, "check", "--deploy", "--fail-level", "WARNING").returncode == 0
    development = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path), "DJANGO_DEBUG": "true",
                   "DJANGO_COOKIE_SAMESITE": "None"}
    refused = manage(development, "check")
    assert refused.returncode != 0 and "needs secure cookies" in refused.stderr


def bare_environment(tmp_path, **variables) -> dict[str, str]:
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path), "LANG": "C.UTF-8",
            "PLATFORM_VAR_DIR": str(tmp_path / "var"), **variables}


def debug_of(env: dict[str, str]) -> subprocess.CompletedProcess:
    return manage(env, "shell", "--no-imports", "-c", "from django.conf import settings as s; print(s.DEBUG)")


def test_debug_is_off_unless_the_environment_turns_it_on(tmp_path):
    key = secrets.token_urlsafe(64)
    assert debug_of(bare_environment(tmp_path, DJANGO_SECRET_KEY=key)).stdout.split() == ["False"]
    assert debug_of(bare_environment(tmp_path, DJANGO_SECRET_KEY=key, DJANGO_DEBUG="")).stdout.split() == ["False"]
    assert debug_of(bare_environment(tmp_path, DJANGO_DEBUG="true")).stdout.split() == ["True"]


def test_no_environment_at_all_is_refused_with_the_way_out(tmp_path):
    """DEBUG off and no secret key: nothing runs on a key everyone knows; the message says what to set."""
    result = manage(bare_environment(tmp_path), "check")
    assert result.returncode != 0
    assert "DJANGO_SECRET_KEY must be set" in result.stderr and "DJANGO_DEBUG=true" in result.stderr


def test_development_needs_only_django_debug(tmp_path):
    result = manage(bare_environment(tmp_path, DJANGO_DEBUG="true"), "check")
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_runs_its_commands_in_development_mode_unless_told_otherwise(tmp_path):
    """`make demo` (and make's other commands) turn DEBUG on; DJANGO_DEBUG from the environment wins."""
    show = ["make", "--no-print-directory", "-s", "--eval", "show-debug: ; @echo $$DJANGO_DEBUG", "show-debug"]
    ran = subprocess.run(show, cwd=ROOT, env=bare_environment(tmp_path), capture_output=True, text=True, timeout=60)
    assert ran.stdout.split() == ["true"], ran.stdout + ran.stderr
    told = subprocess.run(show, cwd=ROOT, env=bare_environment(tmp_path, DJANGO_DEBUG="false"), capture_output=True,
                          text=True, timeout=60)
    assert told.stdout.split() == ["false"], told.stdout + told.stderr


# --- deploy/ ------------------------------------------------------------------------------------

def test_compose_file_validates_with_docker_compose(tmp_path):
    if not Path(DOCKER_COMPOSE).exists():
        if ON_CI:
            pytest.fail(f"CI=true: {DOCKER_COMPOSE} is missing (apt-get install docker-compose)", pytrace=False)
        pytest.skip(f"{DOCKER_COMPOSE} is not installed")
    # No deploy/.env on a fresh clone: the file must validate on its defaults alone.
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path)}
    result = subprocess.run([DOCKER_COMPOSE, "-f", str(COMPOSE_FILE), "config", "-q"], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr


def test_compose_file_runs_every_service_and_every_queue():
    services = compose()["services"]
    assert {"web", "worker", "gpu-worker", "postgres", "redis", "nginx"} <= set(services)
    queues = set()
    for service in services.values():
        match = re.search(r"celery -A config worker .*-Q (\S+)", str(service.get("command", "")))
        if match:
            queues |= set(match.group(1).split(","))
    assert queues == set(settings.JOB_QUEUES)
    gpu = services["gpu-worker"]
    assert "--concurrency 1" in gpu["command"]
    assert gpu["build"]["dockerfile"] == "deploy/Dockerfile.gpu"
    devices = gpu["deploy"]["resources"]["reservations"]["devices"]
    assert any(device["driver"] == "nvidia" for device in devices)
    assert any("celery -A config beat" in str(service.get("command", "")) for service in services.values())


def test_nginx_hands_protected_media_off_through_an_internal_location():
    services = compose()["services"]
    prefix = services["web"]["environment"]["MEDIA_ACCEL_REDIRECT_PREFIX"]
    assert prefix.startswith("/")
    nginx_conf = (DEPLOY / "nginx.conf").read_text()
    locations = dict(re.findall(r"location\s+(\S+)\s*\{([^{}]*)\}", nginx_conf))
    internal = {path.rstrip("/"): body for path, body in locations.items() if re.search(r"^\s*internal;", body, re.M)}
    assert prefix.rstrip("/") in internal, f"no `internal;` location for {prefix} in deploy/nginx.conf"
    alias = re.search(r"alias\s+(\S+);", internal[prefix.rstrip("/")]).group(1)
    # nginx must see the media volume where the location's alias points.
    media_mounts = [volume.split(":")[1] for volume in services["nginx"]["volumes"] if volume.startswith("media:")]
    assert [alias.rstrip("/")] == [mount.rstrip("/") for mount in media_mounts]
    # ...and the protected location must never be reachable without Django's say-so.
    assert prefix.rstrip("/") not in {path.rstrip("/") for path, body in locations.items() if "internal;" not in body}


def test_nginx_serves_collected_static_files_from_the_shared_volume():
    services = compose()["services"]
    nginx_conf = (DEPLOY / "nginx.conf").read_text()
    alias = re.search(r"location\s+/static/\s*\{[^{}]*alias\s+(\S+);", nginx_conf).group(1)
    static_mounts = [volume.split(":")[1] for volume in services["nginx"]["volumes"] if volume.startswith("static:")]
    assert [alias.rstrip("/")] == static_mounts
    assert "static:" + alias.rstrip("/") in services["web"]["volumes"]


@pytest.mark.skipif(shutil.which("nginx") is None, reason="nginx is not installed")
def test_nginx_conf_is_valid(tmp_path):
    """`nginx -t` on the file, with the upstream host and the certificate replaced by local stand-ins."""
    certs = tmp_path / "certs"
    certs.mkdir()
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost",
                    "-keyout", str(certs / "privkey.pem"), "-out", str(certs / "fullchain.pem")],
                   check=True, capture_output=True, timeout=60)
    conf = (DEPLOY / "nginx.conf").read_text()
    conf = conf.replace("/etc/nginx/certs", str(certs)).replace("server web:8000", "server 127.0.0.1:8000")
    conf = conf.replace("pid /tmp/nginx.pid", f"pid {tmp_path / 'nginx.pid'}")
    (tmp_path / "nginx.conf").write_text(conf)
    result = subprocess.run(["nginx", "-t", "-c", str(tmp_path / "nginx.conf"), "-e", "stderr"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
