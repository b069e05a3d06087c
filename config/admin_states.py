"""Admin pages for models with a declared workflow: the state is shown, never edited; the allowed
moves are offered as actions that go through the same service as the API and the pages.

Mix `TransitionActions` into a `ModelAdmin` whose model declares `STATES`. Its state field (and
any `counter_fields`) become read-only; each state some move leads to gets an action "Move to …".
`apply_transition` goes through `config.state.transition` unless the admin sends it to a richer
service (opening a study also checks its items); refusals are reported, not raised.
"""

from django.contrib import admin, messages

from config import state


class TransitionActions:
    counter_fields: tuple[str, ...] = ()  # numbers the services keep (slots, counts): read-only too
    transition_targets: tuple[str, ...] | None = None  # the moves offered; None: every declared target
    refusal_errors: tuple[type[Exception], ...] = ()  # the domain errors `apply_transition` may raise
    transition_reason = "changed in the admin"

    def get_readonly_fields(self, request, obj=None):
        fields = list(super().get_readonly_fields(request, obj))
        locked = (state.machine_of(self.model).field, *self.counter_fields)
        return fields + [name for name in locked if name not in fields]

    def _targets(self) -> list[str]:
        machine = state.machine_of(self.model)
        if self.transition_targets is not None:
            return list(self.transition_targets)
        return sorted({to for targets in machine.transitions.values() for to in targets})

    def get_actions(self, request):
        actions = super().get_actions(request)
        if not self.has_change_permission(request):
            return actions
        choices = dict(self.model._meta.get_field(state.machine_of(self.model).field).flatchoices)
        for to in self._targets():
            name = f"move_to_{to}"
            actions[name] = (self._action_for(to), name, f"Move the selected to “{choices.get(to, to)}”")
        return actions

    @staticmethod
    def _action_for(to: str):
        def action(modeladmin, request, queryset):
            modeladmin.move_each(request, queryset, to)

        return action

    def apply_transition(self, request, obj, to: str) -> None:
        """Move one object; override to go through the model's own service."""
        state.transition(obj, to, request.user, self.transition_reason)

    def move_each(self, request, queryset, to: str) -> None:
        moved, refused = 0, []
        for obj in queryset:
            try:
                self.apply_transition(request, obj, to)
            except (state.TransitionRefused, *self.refusal_errors) as exc:
                refused.append(f"#{obj.pk}: {getattr(exc, 'message', None) or exc}")
            else:
                moved += 1
        self.message_user(request, f"{moved} moved to {to}.")
        if refused:
            self.message_user(request, "Refused: " + "; ".join(refused[:20]), messages.WARNING)


class RecordsOnly:
    """Admin mixin for insert-only records: shown, never added, changed or deleted from the admin."""

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class StateChangeAdmin(RecordsOnly, admin.ModelAdmin):
    """The insert-only state history, to read."""

    list_display = ["created_at", "content_type", "object_id", "from_state", "to_state", "actor", "reason"]
    list_filter = ["content_type", "to_state"]
    search_fields = ["reason", "actor__username"]
