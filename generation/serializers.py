from rest_framework import serializers

from generation.models import Job


class JobSerializer(serializers.ModelSerializer):
    requested_by = serializers.SlugRelatedField(slug_field="username", read_only=True)
    is_finished = serializers.BooleanField(read_only=True)

    class Meta:
        model = Job
        fields = ["id", "kind", "queue", "status", "progress", "message", "log", "result", "params",
                  "requested_by", "created_at", "started_at", "finished_at", "is_finished"]
        read_only_fields = fields
