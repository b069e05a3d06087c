"""The staged reveal as a study kind (`annotation.crowd.kinds`): how the crowd engine reads, checks, adds and
shows the items and answers of a study of kind `blackswan_staged` (`annotation.benchmarks.blackswan.staged`).

Its items name finished splits, one per video (`check_rows`, `api_rows`); its workers stream only the clips
their current step shows (`own_media`: the kind's media grant is `staged.clips_of_current_step`); a claim goes
in steps (`steps`), each saved and submitted at the routes of `staged_api`, on a page per
step (`staged_page`); reviewers see the answers as rows, the clips as the worker saw them and an edit form
shaped like the answers.
"""

from annotation.benchmarks.blackswan import staged, staged_page
from annotation.crowd import kinds

KIND = kinds.register(kinds.StudyKind(
    staged.STUDY_KIND, lambda _schema, _payload, data: staged.readable_answers(data), staged.clean_answers,
    uses_form=False, one_item_per_video=True, review_media=staged.seen_parts, edit_form=staged.edit_form,
    check_rows=staged.check_rows, api_rows=staged.api_rows, items_help="blackswan/_staged_items.html",
    own_media=True, steps=staged.STEPS, task_page=staged_page.step_page, task_preview=staged_page.preview_page))
