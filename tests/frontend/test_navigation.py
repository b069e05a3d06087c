"""The navigation: the generic entries plus each benchmark package's own (`frontend.benchmarks`), in the order
users have always seen them."""

import pytest

from config.roles import ADMIN, ANNOTATOR, CURATOR, RESEARCHER
from frontend import benchmarks, navigation
from frontend.benchmarks.nleye import navigation as nleye_navigation
from frontend.navigation import NavEntry, entries_for

BENCHMARK_ENTRIES = ["BlackSwan variants", "NL-EYE triplets", "C-VQA curation", "CVRR-ES curation", "MAIA curation"]
SEEN = {  # what each role sees, in order
    ANNOTATOR: ["My tasks"],
    CURATOR: ["Queues", "Studies", "Media", "Generation", "Image studio", *BENCHMARK_ENTRIES, "Benchmarks",
              "Judge validation", "Jobs", "Models"],
    RESEARCHER: ["Media", "Benchmarks", "Runs", "Results", "Judge validation", "Jobs", "Models"],
    ADMIN: ["My tasks", "Queues", "Studies", "Media", "Generation", "Image studio", *BENCHMARK_ENTRIES,
            "Benchmarks", "Runs", "Results", "Judge validation", "Jobs", "Models"],
}


@pytest.mark.parametrize("role", SEEN)
def test_each_role_sees_its_entries_in_the_order_it_always_had(role, role_users):
    assert [entry.label for entry in entries_for(role_users[role])] == SEEN[role]


def test_nleye_s_entry_and_pages_come_from_its_package():
    [entry] = nleye_navigation.ENTRIES
    assert (entry.label, entry.url_name, set(entry.roles)) == ("NL-EYE triplets", "nleye-triplets", {CURATOR, ADMIN})
    assert entry not in navigation.ENTRIES and entry in navigation.entries()
    [pages] = [pages for pages in benchmarks.registered() if pages.slug == "nleye"]
    assert pages.urls == "frontend.benchmarks.nleye.urls" and pages.entries == (entry,)
    assert "frontend.benchmarks.nleye.urls" in benchmarks.url_modules()


def test_a_benchmark_s_entries_follow_the_generic_ones_of_their_section_by_their_order():
    early = NavEntry("Early", "home", (CURATOR,), "Curate", order=15)
    late = NavEntry("Late", "home", (CURATOR,), "Curate", order=99)
    elsewhere = NavEntry("Elsewhere", "home", (CURATOR,), "Reports", order=1)
    benchmarks.register("zzz", entries=[late, elsewhere, early])
    try:
        labels = [entry.label for entry in navigation.entries()]
    finally:
        benchmarks.unregister("zzz")
    curate = labels[labels.index("Queues"):labels.index("Benchmarks")]
    assert curate[curate.index("Image studio") + 1:] == [
        "BlackSwan variants", "Early", "NL-EYE triplets", "C-VQA curation", "CVRR-ES curation", "MAIA curation",
        "Late"]
    assert labels[-1] == "Elsewhere"  # a section no generic entry opens comes last
    assert "Early" not in [entry.label for entry in navigation.entries()]
