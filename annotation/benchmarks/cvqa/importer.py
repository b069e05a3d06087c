"""C-VQA release: `C-VQA-Real_questions.csv` and `C-VQA-Synthetic_questions.csv` with their images (SPEC §2).

Each CSV may sit anywhere under the imported folder (normally `C-VQA/C-VQA-Real/` and
`C-VQA/C-VQA-Synthetic/`); at least one is needed, and each at most once. Columns
`img_path, query, answer, new query, new answer, type`; header case and spacing do not matter and
a few aliases are accepted (`ALIASES`).

Items: kind `real` or `synthetic` after the file, with `img_path`, `query`, `answer`, `new_query`,
`new_answer` and `type` (lower case). Real types are direct | indirect | boolean; synthetic ones
abs_counting_1 … abs_counting_6, whose answers are option letters A–D (the options sit in the query).

Image (role `image`): `img_path` is looked for under the CSV's folder, at that relative path, else
as a file whose path ends with it, else by file name; matching several files is a problem.

External id: `<real|synthetic>:<img_path>:<line>`, the line of the row in its CSV, so an image with
several questions gives several items; stable as long as the file is not reordered. The same
question twice in a file (same image, query and new query) gives two items, each with its own line
in its id, and a warning naming the file and lines: the authors' real CSV holds one byte-identical
duplicate row, and the paper's 3,144 items count both (SPEC, "Fidelity rules").
"""

from __future__ import annotations

from pathlib import Path

from annotation.importers.base import ItemSpec, MediaRef, Problems, source_record, text
from annotation.importers.files import FileIndex, find_one, read_table
from generation.media_probe import IMAGE_EXTENSIONS

FILES = {"real": "C-VQA-Real_questions.csv", "synthetic": "C-VQA-Synthetic_questions.csv"}
COLUMNS = ("img_path", "query", "answer", "new_query", "new_answer", "type")
ALIASES = {
    "img_path": ("image", "image_path", "img", "image_file", "img_name"),
    "query": ("question", "original_query", "original_question"),
    "answer": ("original_answer",),
    "new_query": ("new_question", "counterfactual_query", "counterfactual_question"),
    "new_answer": ("counterfactual_answer",),
    "type": ("question_type",),
}
TYPES = {
    "real": ("direct", "indirect", "boolean"),
    "synthetic": tuple(f"abs_counting_{n}" for n in range(1, 7)),
}
LETTERS = ("A", "B", "C", "D")


def read(root: Path, problems: Problems) -> list[ItemSpec]:
    specs = []
    found_any = False
    for subset, name in FILES.items():
        path = find_one(root, name, problems)
        if path is None:
            continue
        found_any = True
        specs.extend(_read_subset(subset, path, root, problems))
    if not found_any and not problems:
        problems.add(str(root), f"neither {FILES['real']} nor {FILES['synthetic']} found "
                                "(a C-VQA release has C-VQA/C-VQA-Real/… and C-VQA/C-VQA-Synthetic/…)")
    return specs


def _read_subset(subset: str, path: Path, root: Path, problems: Problems) -> list[ItemSpec]:
    table = read_table(path, root, problems, aliases=ALIASES, required=COLUMNS)
    if table is None:
        return []
    images = FileIndex(path.parent)
    specs = []
    seen: dict[tuple, list] = {}
    for row in table.rows:
        values = {name: text(row.fields[name]) for name in COLUMNS}
        errors = [f"empty '{table.name(name)}'" for name, value in values.items() if not value]
        values["type"] = values["type"].lower()
        if values["type"] and values["type"] not in TYPES[subset]:
            errors.append(f"type must be one of {', '.join(TYPES[subset])} (got {row.fields['type']!r})")
        if subset == "synthetic":
            errors += [f"'{table.name(name)}' must be an option letter A–D (got {values[name]!r})"
                       for name in ("answer", "new_answer") if values[name] and values[name].upper() not in LETTERS]
        image = _find_image(images, values["img_path"], root) if values["img_path"] else None
        if isinstance(image, str):
            errors.append(image)
        seen.setdefault((values["img_path"], values["query"], values["new_query"]), []).append(row)
        for message in errors:
            problems.add(row.where, message)
        if errors:
            continue
        media = {"image": image}
        payload = {"kind": subset, **values,
                   "source": source_record(table.file, row.record, root=root, media=media, columns=table.columns,
                                           **row.position)}
        specs.append(ItemSpec(external_id=f"{subset}:{values['img_path']}:{row.position['line']}",
                              payload=payload, where=row.where, media=media))
    _warn_repeated(table, seen, problems)
    return specs


def _warn_repeated(table, seen: dict[tuple, list], problems: Problems) -> None:
    """One warning per question that the file holds more than once; every row stays an item of its own."""
    for rows in seen.values():
        if len(rows) < 2:
            continue
        lines = [row.position["line"] for row in rows]
        identical = all(row.record == rows[0].record for row in rows)
        problems.warn(table.file, f"lines {', '.join(map(str, lines))} hold the same question (same img_path, "
                                  f"query and new query{'; the rows are identical' if identical else ''}); "
                                  "each row is imported as an item of its own")


def _find_image(images: FileIndex, img_path: str, root: Path) -> MediaRef | str:
    """The image `img_path` names, a MediaRef without a path when there is none, or a problem text."""
    name = img_path.replace("\\", "/")
    while name.startswith("./"):
        name = name[2:]
    exact = images.by_relative_path(name)
    found = [exact] if exact is not None else (images.by_trailing_path(name) or images.by_name(Path(name).name))
    found = [path for path in found if path.suffix.lower() in IMAGE_EXTENSIONS]
    if len(found) > 1:
        listed = ", ".join(path.relative_to(root).as_posix() for path in found[:4])
        return f"img_path {img_path!r} matches several files ({listed})"
    expected = (images.folder / name).relative_to(root).as_posix()
    return MediaRef(kind="image", path=found[0] if found else None, expected=expected)
