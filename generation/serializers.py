from rest_framework import serializers

from config.api_fields import JSONObjectField
from generation.models import Job


class JobSerializer(serializers.ModelSerializer):
    requested_by = serializers.SlugRelatedField(slug_field="username", read_only=True, allow_null=True)
    is_finished = serializers.BooleanField(read_only=True)
    params = JSONObjectField(read_only=True, help_text="the job's inputs; their keys depend on its kind")
    result = JSONObjectField(read_only=True, help_text="what the job produced; its keys depend on its kind")

    class Meta:
        model = Job
        fields = ["id", "kind", "queue", "status", "progress", "message", "log", "result", "params",
                  "requested_by", "created_at", "started_at", "finished_at", "is_finished"]
        read_only_fields = fields
