"""The shape of the source tree, read with `ast`: no import of the project's own modules inside a function
(outside `AppConfig.ready`), no import cycle between the project's modules, and no benchmark slug in a
generic module."""

from __future__ import annotations

import ast
from pathlib import Path

from annotation.benchmarks import registry as annotation_registry
from evaluation import benchmarks as evaluation_registry

ROOT = Path(__file__).resolve().parent.parent
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


# --- Generic modules name no benchmark --------------------------------------------------------------

def benchmark_specific(path: str, slugs: set[str]) -> bool:
    """Where a benchmark's slug belongs: the modules of that benchmark."""
    parts = path.split("/")
    return (
        # what a benchmark is as data: its package in the annotation registry
        (parts[:2] == ["annotation", "benchmarks"] and len(parts) > 3 and parts[2] in slugs)
        # how a benchmark is evaluated: its module in the evaluation registry
        or (parts[:2] == ["evaluation", "benchmarks"] and parts[-1].removesuffix(".py") in slugs)
        # BlackSwan's curation workflows (splits, variants, staged and quality studies)
        or parts[:2] == ["annotation", "blackswan"]
        # the judges of one benchmark each: the stored judge kind is named for its benchmark
        or path in {"evaluation/judges/cvrr.py", "evaluation/judges/maia.py", "evaluation/judges/nleye.py",
                    "evaluation/judges/llm_match.py"}
    )


def test_the_registries_name_the_five_benchmarks():
    assert set(annotation_registry.slugs()) == set(evaluation_registry.slugs()) == {
        "blackswan", "cvqa", "nleye", "cvrr", "maia"}


def test_only_a_benchmark_s_own_places_are_benchmark_specific():
    slugs = {"maia", "cvqa"}
    assert benchmark_specific("annotation/benchmarks/maia/schema.py", slugs)
    assert benchmark_specific("evaluation/benchmarks/cvqa.py", slugs)
    assert not benchmark_specific("annotation/benchmarks/registry.py", slugs)
    assert not benchmark_specific("evaluation/benchmarks/base.py", slugs)
    assert not benchmark_specific("evaluation/results/specs.py", slugs)


def test_generic_modules_hold_no_benchmark_slug():
    slugs = set(annotation_registry.slugs()) | set(evaluation_registry.slugs())
    found = []
    for module, tree in TREES.items():
        path = relative(module)
        if benchmark_specific(path, slugs):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in slugs:
                found.append(f"{path}:{node.lineno}: {node.value!r}")
    assert found == []


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
