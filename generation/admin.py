from django.contrib import admin

from generation import jobs
from generation.models import Job


@admin.register(Job)
class JobAdmin(admin.ModelAdmin):
    list_display = ["id", "kind", "status", "progress", "message", "requested_by", "created_at", "finished_at"]
    list_filter = ["status", "kind", "queue"]
    search_fields = ["kind", "message", "requested_by__username"]
    readonly_fields = [f.name for f in Job._meta.fields]
    actions = ["cancel_jobs"]

    def has_add_permission(self, request):
        return False

    @admin.action(description="Cancel selected jobs")
    def cancel_jobs(self, request, queryset):
        cancelled = sum(jobs.cancel(job) for job in queryset)
        self.message_user(request, f"Cancelled {cancelled} job(s).")
