"""The shape of the source tree, read with `ast`: no import of the project's own modules inside a function
(outside `AppConfig.ready`), no import cycle between the project's modules, and a benchmark named only in
its own places (its packages, templates, page scripts, commands and tests)."""

from __future__ import annotations

import ast
import fnmatch
import re
import sys
from pathlib import Path

from annotation.benchmarks import registry as annotation_registry
from evaluation import benchmarks as evaluation_registry

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("annotation", "evaluation", "generation", "config", "frontend")


def source_files():
    """(dotted module name, path) of every module of the project's packages but migrations and tests."""
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            if "migrations" in parts or "tests" in parts:
                continue
            if parts[-1] == "__init__":
                parts = parts[:-1]
            yield ".".join(parts), path


MODULES = dict(source_files())


def is_package(module: str) -> bool:
    return MODULES[module].name == "__init__.py"


def is_project(name: str) -> bool:
    return name.split(".")[0] in PACKAGES


def absolute(module: str, node: ast.ImportFrom) -> str:
    """The absolute name of the module that `from ... import` names."""
    if not node.level:
        return node.module
    base = module.split(".") if is_package(module) else module.split(".")[:-1]
    base = base[: len(base) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def imported_modules(module: str, node: ast.Import | ast.ImportFrom) -> list[str]:
    """The project modules an import statement loads: `from pkg import name` names `pkg.name` when that is
    a module, else `pkg`."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names if is_project(alias.name)]
    source = absolute(module, node)
    if not is_project(source):
        return []
    found = []
    for alias in node.names:
        candidate = f"{source}.{alias.name}"
        found.append(candidate if candidate in MODULES else source)
    return found


def is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def module_level_imports(tree: ast.Module):
    """Import statements that run when the module is loaded: the module body and the blocks of its
    `if`/`try`/`with` statements, but not `if TYPE_CHECKING:`, functions or classes."""
    pending = list(tree.body)
    while pending:
        node = pending.pop(0)
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        elif isinstance(node, ast.If):
            if not is_type_checking(node):
                pending.extend(node.body + node.orelse)
        elif isinstance(node, ast.Try):
            pending.extend(node.body + node.orelse + node.finalbody)
            for handler in node.handlers:
                pending.extend(handler.body)
        elif isinstance(node, ast.With):
            pending.extend(node.body)


def is_app_config_ready(function: ast.FunctionDef, owner: ast.ClassDef | None) -> bool:
    """`ready` of a class deriving from `AppConfig`: Django calls it once the apps are loaded, the one
    place where an app may import its own modules to register them."""
    if function.name != "ready" or owner is None:
        return False
    return any((isinstance(base, ast.Name) and base.id == "AppConfig")
               or (isinstance(base, ast.Attribute) and base.attr == "AppConfig") for base in owner.bases)


def imports_inside_functions(module: str, tree: ast.Module):
    """(line, imported module) of each project import inside a function body, outside `AppConfig.ready`."""
    def visit(node, owner, in_function):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if is_app_config_ready(child, owner):
                    continue
                yield from visit(child, None, True)
            elif isinstance(child, ast.ClassDef):
                yield from visit(child, child, in_function)
            elif isinstance(child, (ast.Import, ast.ImportFrom)):
                if in_function:
                    for name in imported_modules(module, child):
                        yield child.lineno, name
            else:
                yield from visit(child, owner, in_function)

    yield from visit(tree, None, False)


TREES = {module: ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
         for module, path in MODULES.items()}


def relative(module: str) -> str:
    return MODULES[module].relative_to(ROOT).as_posix()


def test_the_scan_reads_the_project():
    assert {"annotation.models", "evaluation.runs", "generation.jobs", "config.settings",
            "frontend.views"} <= set(MODULES)
    assert not any(".migrations" in module for module in MODULES)


# --- No project import inside a function ----------------------------------------------------------

def test_no_project_module_is_imported_inside_a_function():
    found = [f"{relative(module)}:{line}: imports {name}"
             for module, tree in TREES.items() for line, name in imports_inside_functions(module, tree)]
    assert found == []


def test_the_function_import_check_sees_a_hidden_import_and_spares_app_config_ready():
    tree = ast.parse(
        "from django.apps import AppConfig\n"
        "class Config(AppConfig):\n"
        "    def ready(self):\n"
        "        from . import signals\n"
        "def helper():\n"
        "    import torch\n"
        "    from evaluation import runs\n"
        "class Other:\n"
        "    def ready(self):\n"
        "        from annotation.models import Item\n")
    assert list(imports_inside_functions("evaluation.apps", tree)) == [(7, "evaluation.runs"),
                                                                       (10, "annotation.models")]


# --- No import cycle -------------------------------------------------------------------------------

def import_graph() -> dict[str, set[str]]:
    graph = {module: set() for module in MODULES}
    for module, tree in TREES.items():
        for node in module_level_imports(tree):
            for name in imported_modules(module, node):
                # `import a.b` of a module this scan does not know (a typo would fail anyway) is skipped
                if name in MODULES and name != module:
                    graph[module].add(name)
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of the graph as a list of modules whose last one imports the first, or None."""
    state = {}
    stack = []

    def visit(node):
        state[node] = "open"
        stack.append(node)
        for target in sorted(graph[node]):
            if state.get(target) == "open":
                return stack[stack.index(target):]
            if target not in state:
                cycle = visit(target)
                if cycle:
                    return cycle
        stack.pop()
        state[node] = "done"
        return None

    for node in sorted(graph):
        if node not in state:
            cycle = visit(node)
            if cycle:
                return cycle
    return None


def test_the_project_modules_import_each_other_without_a_cycle():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join([*cycle, cycle[0]])


def test_the_cycle_finder_reports_a_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


# --- A benchmark's slug appears only in its own places ----------------------------------------------
#
# A benchmark lives in its own places (`own_place`): its packages in each layer, its templates and page
# scripts, its commands (`<slug>_…`, and their old names kept as aliases of them) and its tests. Outside them
# no file names it: no Python string that is its slug, no path that names it, no word of a URL module, a
# navigation module or a template that names it (its slug or its display name), no command that imports its
# packages under another name.

SLUGS = tuple(sorted(set(annotation_registry.slugs()) | set(evaluation_registry.slugs())))
# a benchmark's names as a word: its slug and display names, in any case ("nleye-triplets", "NL-EYE triplets")
NAMES = {slug: {slug} | {definition.name for definition in annotation_registry.all() if definition.slug == slug}
         | {benchmark.title for benchmark in evaluation_registry.registered() if benchmark.slug == slug}
         for slug in SLUGS}
SCANNED = (*PACKAGES, "tests")

# What is still in a shared place, per benchmark, until its mover takes it home: each mover empties the list
# of their benchmark (moving the files, or removing the lines of a shared file that name it), and the test
# fails on a pattern that nothing needs any more as on anything named outside its places and not listed here.
NOT_YET_MOVED = {
    "blackswan": (),
    "cvqa": (),
    "cvrr": (),
    "maia": (),
    "nleye": (),
}


def own_place(path: str, slug: str) -> bool:
    """Whether `path` (relative to the root) is one of the places of benchmark `slug`."""
    parts = path.split("/")
    return (
        # its package in each layer: what it is as data, how it is evaluated (its judge and human evaluation
        # included), its pages, and its tests
        (len(parts) > 3 and parts[1] == "benchmarks" and parts[2] == slug
         and parts[0] in ("annotation", "evaluation", "frontend", "tests"))
        # its templates and its page scripts and styles
        or path.startswith((f"frontend/templates/{slug}/", f"frontend/static/frontend/{slug}/"))
        # its commands, which Django looks for in an app's management/commands/
        or (parts[1:3] == ["management", "commands"] and len(parts) == 4 and parts[3].startswith(f"{slug}_"))
    )


def not_yet_moved(path: str, slug: str) -> str | None:
    """The pattern of `NOT_YET_MOVED` that lets `path` name benchmark `slug` for now, or None."""
    return next((pattern for pattern in NOT_YET_MOVED.get(slug, ()) if fnmatch.fnmatchcase(path, pattern)), None)


def named(text: str, slug: str) -> bool:
    """Whether `text` names benchmark `slug` as a word (letters and digits on neither side), in any case."""
    return any(re.search(rf"(?<![a-z0-9]){re.escape(name.lower())}(?![a-z0-9])", text.lower())
               for name in NAMES.get(slug, {slug}))


def scanned_files():
    """(path relative to the root, Path) of every file of the project's packages and tests but migrations and
    compiled files."""
    for folder in SCANNED:
        for path in sorted((ROOT / folder).rglob("*")):
            parts = path.relative_to(ROOT).parts
            if path.is_file() and "migrations" not in parts and "__pycache__" not in parts:
                yield path.relative_to(ROOT).as_posix(), path


def is_read_in_full(path: str) -> bool:
    """URL modules, navigation modules and templates: every word of them counts."""
    name = path.rsplit("/", 1)[-1]
    return (name in ("urls.py", "navigation.py") or name.endswith("_urls.py")
            or ("/templates/" in f"/{path}" and not name.endswith(".py")))


def command_alias_of(tree: ast.Module) -> str | None:
    """The command a management command module is an alias of (`class Command(<command>.Command)`), or None."""
    imported = {alias.asname or alias.name: f"{node.module}.{alias.name}" for node in tree.body
                if isinstance(node, ast.ImportFrom) and node.module for alias in node.names}
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == "Command":
            for base in node.bases:
                if isinstance(base, ast.Attribute) and base.attr == "Command" and isinstance(base.value, ast.Name):
                    found = imported.get(base.value.id, "")
                    if ".management.commands." in found:
                        return found.rsplit(".", 1)[-1]
    return None


def command_aliases() -> dict[str, str]:
    """{path: command} of every management command module that is an alias of another command."""
    aliases = {relative(module): command_alias_of(tree) for module, tree in TREES.items()
               if ".management.commands." in module}
    return {path: command for path, command in aliases.items() if command}


def slug_findings() -> list[tuple[str, str, str]]:
    """(slug, path, what) of every place outside a benchmark's own ones that names it."""
    findings = []
    aliases = command_aliases()
    for path, file in scanned_files():
        for slug in SLUGS:
            # a command's old name, kept as an alias of one of the benchmark's commands, is one of its places
            if own_place(path, slug) or aliases.get(path, "").startswith(f"{slug}_"):
                continue
            if named(path, slug):
                findings.append((slug, path, "its path names it"))
            if is_read_in_full(path) and named(file.read_text(encoding="utf-8"), slug):
                findings.append((slug, path, "names it"))
    for module, tree in TREES.items():
        path = relative(module)
        constants = {node.value: node.lineno for node in ast.walk(tree)
                     if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in SLUGS}
        for slug, line in sorted(constants.items()):
            if not own_place(path, slug):
                findings.append((slug, path, f"line {line}: the string {slug!r}"))
        if ".management.commands." in module and not module.rsplit(".", 1)[-1].startswith("_"):
            for slug in SLUGS:
                uses = any(name.split(".")[1:3] == ["benchmarks", slug] for node in ast.walk(tree)
                           if isinstance(node, (ast.Import, ast.ImportFrom))
                           for name in imported_modules(module, node))
                alias = command_alias_of(tree) or ""
                if uses and not own_place(path, slug) and not alias.startswith(f"{slug}_"):
                    findings.append((slug, path, f"a command of {slug} not named {slug}_…"))
    return findings


def test_the_registries_name_the_five_benchmarks():
    assert set(annotation_registry.slugs()) == set(evaluation_registry.slugs()) == {
        "blackswan", "cvqa", "nleye", "cvrr", "maia"}


def test_a_benchmark_s_own_places():
    assert own_place("annotation/benchmarks/maia/schema.py", "maia")
    assert own_place("evaluation/benchmarks/nleye/judge.py", "nleye")
    assert own_place("frontend/benchmarks/nleye/urls.py", "nleye")
    assert own_place("frontend/templates/nleye/triplets.html", "nleye")
    assert own_place("frontend/static/frontend/nleye/triplets.css", "nleye")
    assert own_place("tests/benchmarks/nleye/test_scoring.py", "nleye")
    assert own_place("annotation/management/commands/nleye_scene_writing_study.py", "nleye")
    assert not own_place("frontend/benchmarks/nleye/urls.py", "maia")
    assert not own_place("frontend/templates/frontend/nleye_triplets.html", "nleye")
    assert not own_place("frontend/benchmarks/__init__.py", "nleye")
    assert not own_place("annotation/benchmarks/registry.py", "nleye")
    assert not own_place("evaluation/benchmarks/base.py", "cvqa")
    assert not own_place("evaluation/benchmarks/cvqa.py", "cvqa")  # a single module, not a package
    assert not own_place("evaluation/judges/nleye.py", "nleye")
    assert not own_place("annotation/management/commands/scene_writing_study.py", "nleye")
    assert not own_place("tests/test_nleye_scenes.py", "nleye")


def test_a_name_counts_as_a_word_in_any_case():
    assert named('path("nleye/triplets/", views.page, name="nleye-triplets")', "nleye")
    assert named("from frontend import nleye_views", "nleye")
    assert named('NavEntry("NL-EYE triplets", ...)', "nleye")
    assert named("<h1>CVRR-ES curation</h1>", "cvrr") and named("MAIA curation", "maia")
    assert not named("nleyes nleye2 scenes", "nleye")


def test_the_alias_of_a_command_is_read():
    tree = ast.parse("from annotation.management.commands import nleye_scene_writing_study\n"
                     "class Command(nleye_scene_writing_study.Command):\n    pass\n")
    assert command_alias_of(tree) == "nleye_scene_writing_study"
    assert command_alias_of(ast.parse("from x import y\nclass Command(y.BaseCommand):\n    pass\n")) is None


def test_the_rule_sees_a_benchmark_named_outside_its_places(tmp_path, monkeypatch):
    """A shared URL module, template or page module naming a benchmark, and a flat view module, are found."""
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    monkeypatch.setattr(sys.modules[__name__], "TREES", {})
    files = {"frontend/urls.py": 'path("nleye/triplets/", views.page)\n',
             "frontend/navigation.py": 'NavEntry("NL-EYE triplets", "triplets", (), "Curate")\n',
             "frontend/templates/frontend/results.html": "<p>NL-EYE</p>\n",
             "frontend/templates/crowd/_nleye_help.html": "<p>help</p>\n",
             "frontend/nleye_views.py": "VIEWS = 1\n",
             "frontend/benchmarks/nleye/urls.py": 'path("nleye/triplets/", views.page)\n',
             "frontend/templates/nleye/triplets.html": "<h1>NL-EYE triplets</h1>\n",
             "frontend/views.py": "# NL-EYE, in a comment of an ordinary module\n"}
    for path, text in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    assert sorted((path, what) for slug, path, what in slug_findings() if slug == "nleye") == [
        ("frontend/navigation.py", "names it"),
        ("frontend/nleye_views.py", "its path names it"),
        ("frontend/templates/crowd/_nleye_help.html", "its path names it"),
        ("frontend/templates/frontend/results.html", "names it"),
        ("frontend/urls.py", "names it")]


def test_a_benchmark_is_named_only_in_its_own_places_or_where_it_has_not_moved_from_yet():
    """No URL module, navigation, template, page module, command or generic module names a benchmark outside
    its places, but what `NOT_YET_MOVED` lists for it; and every pattern there is still needed."""
    findings = slug_findings()
    found = [f"{path}: {what} ({slug})" for slug, path, what in findings if not not_yet_moved(path, slug)]
    assert found == []
    needed = {(slug, not_yet_moved(path, slug)) for slug, path, _ in findings}
    stale = [f"{slug}: {pattern}" for slug, patterns in NOT_YET_MOVED.items() for pattern in patterns
             if (slug, pattern) not in needed]
    assert stale == [], "moved already: take these out of NOT_YET_MOVED"


def test_cvqa_has_moved_home():
    """C-VQA has nothing left in shared places; its commands' old names are aliases of its `cvqa_…` commands."""
    assert NOT_YET_MOVED["cvqa"] == ()
    assert command_aliases()["annotation/management/commands/import_cvqa_sources.py"] == "cvqa_import_sources"
    assert [finding for finding in slug_findings() if finding[0] == "cvqa"] == []


def test_nleye_has_moved_home():
    """NL-EYE, the first benchmark moved, has nothing left in shared places."""
    assert NOT_YET_MOVED["nleye"] == ()
    assert [finding for finding in slug_findings() if finding[0] == "nleye"] == []


# --- The results page shows what each benchmark declares -------------------------------------------------------

RESULTS_PAGE = "frontend/templates/frontend/results_version.html"
RESULTS_SECTION_TEMPLATES = "frontend/templates/frontend/results/"


def declared_metric_paths() -> set[str]:
    """Every metric path a registered benchmark declares for its pages: leaderboard columns, series, consistency
    views and the run metrics of its results sections (a `{variant}` path as written and for each variant); a
    top-level name alone (`n`, `accuracy`) is no benchmark's, so only dotted paths count."""
    found = set()
    for benchmark in evaluation_registry.registered():
        found |= {spec.path for spec in benchmark.main_metrics}
        found |= {spec.path(group) for spec in benchmark.series for group in spec.groups}
        found |= {view.path for view in benchmark.consistency_views.values()}
        for section in benchmark.results_sections:
            for metric in section.metrics:
                found |= {metric.path} | {metric.path_for(variant) for variant in benchmark.variants}
    return {path for path in found if "." in path}


def test_the_results_page_names_no_benchmark_and_no_benchmark_s_metric_path():
    """The version's results page and its section templates are read in full by the slug rule and name no
    benchmark; nor do they hold a metric path a benchmark declares: the benchmark module says what they show."""
    templates = [path for path, _ in scanned_files()
                 if path == RESULTS_PAGE or path.startswith(RESULTS_SECTION_TEMPLATES)]
    assert RESULTS_PAGE in templates and len(templates) > 1 and all(map(is_read_in_full, templates))
    assert [finding for finding in slug_findings() if finding[1] in templates] == []
    paths = declared_metric_paths()
    assert any(section.metrics for benchmark in evaluation_registry.registered()
               for section in benchmark.results_sections)
    assert [(template, path) for template in templates for path in sorted(paths)
            if path in (ROOT / template).read_text(encoding="utf-8")] == []


# --- The crowd engine knows no benchmark ---------------------------------------------------------------
#
# A benchmark's kinds of study (a task in steps, media of their own, their own pages) plug into the crowd
# engine through the hooks of `annotation.crowd.kinds`; the engine and its generic pages import none of them.

CROWD_ENGINE = ("annotation.crowd", "frontend.crowd_views", "frontend.worker_views", "frontend.study_setup_views")


def benchmark_imports(module: str, tree: ast.Module) -> list[tuple[int, str]]:
    """(line, imported module) of each import of `tree` that names a benchmark."""
    return [(node.lineno, name) for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))
            for name in imported_modules(module, node) if any(named(name, slug) for slug in SLUGS)]


def test_the_crowd_engine_imports_no_benchmark():
    found = [f"{relative(module)}:{line}: imports {name}" for module, tree in TREES.items()
             if any(module == part or module.startswith(f"{part}.") for part in CROWD_ENGINE)
             for line, name in benchmark_imports(module, tree)]
    assert found == []


def test_the_engine_check_sees_a_benchmark_import():
    tree = ast.parse("from annotation.benchmarks.blackswan import staged\nfrom annotation.crowd import kinds\n"
                     "import frontend.benchmarks.nleye.urls\n")
    assert benchmark_imports("annotation.crowd.api", tree) == [(1, "annotation.benchmarks.blackswan.staged"),
                                                               (3, "frontend.benchmarks.nleye.urls")]


# --- Management commands are the top layer ------------------------------------------------------------

def test_only_management_commands_import_management_commands():
    """Views, API views and services share option parsing through modules such as `evaluation.cli_options`,
    never by importing a command."""
    found = [f"{relative(module)}: imports {name}"
             for module, tree in TREES.items() if ".management.commands" not in module
             for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))
             for name in imported_modules(module, node) if ".management.commands" in name]
    assert found == []


# --- Pages read through selectors -------------------------------------------------------------------

def test_pages_build_no_query_inline():
    """The pages (`frontend/`) read through selectors (`annotation.selectors`, `evaluation.selectors`, …):
    no `Model.objects` in a view module."""
    found = [f"{relative(module)}:{node.lineno}: {ast.unparse(node)}"
             for module, tree in TREES.items() if module.startswith("frontend.")
             for node in ast.walk(tree) if isinstance(node, ast.Attribute) and node.attr == "objects"]
    assert found == []


# --- Apps are layered one way --------------------------------------------------------------------------

LAYER_BELOW = {  # app → the apps its modules may import
    "config": set(),
    "generation": {"config"},
    "annotation": {"config", "generation"},
    "evaluation": {"config", "generation", "annotation"},
    "frontend": {"config", "generation", "annotation", "evaluation"},
}
# the URL roots and the Celery app put the apps together
TOP_OF_CONFIG = {"config.urls", "config.api_urls", "config.celery"}


def test_apps_import_only_the_apps_below_them():
    found = []
    for module, tree in TREES.items():
        app = module.split(".")[0]
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for name in imported_modules(module, node):
                    other = name.split(".")[0]
                    if other != app and other not in LAYER_BELOW[app] and module not in TOP_OF_CONFIG:
                        found.append(f"{relative(module)}:{node.lineno}: imports {name}")
    assert found == []


# --- Study wrappers speak alike ------------------------------------------------------------------------

STUDY_WRAPPER_NAMES = {"user", "created_by", "annotators_per_item", "reviewers_per_item"}


def test_study_wrappers_take_curator_and_k():
    """Every `create_…_study` wrapper names its creator `curator` and the answers per item `k`
    (`annotation.crowd.studies.create_study`, the engine's own, keeps the model's field names)."""
    found, wrappers = [], []
    for module, tree in TREES.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and re.fullmatch(r"create_\w+_study", node.name):
                wrappers.append(node.name)
                arguments = node.args
                names = {a.arg for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)}
                if "curator" not in names or names & STUDY_WRAPPER_NAMES:
                    found.append(f"{relative(module)}:{node.lineno}: {node.name}({', '.join(sorted(names))})")
    assert len(wrappers) >= 14, wrappers  # every benchmark's and the generic ones are seen
    assert found == []
