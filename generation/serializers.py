from rest_framework import serializers

from config.api_fields import JSONObjectField
from generation.models import Job, RegisteredModel
from generation.registered_models import Use


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


class RegisteredModelSerializer(serializers.ModelSerializer):
    """A model people may pick (`generation.model_registry`): name it (or its id, or the model id it holds)
    in `model_id`, `judge_model`, … of the requests that run a model."""

    uses = serializers.ListField(child=serializers.ChoiceField(choices=Use.choices), read_only=True,
                                 help_text="what it may be used for")
    options = JSONObjectField(read_only=True, help_text="options it always loads with; their keys are the backend's")
    allowed_options = serializers.ListField(child=serializers.CharField(), read_only=True,
                                            help_text="options people may add when they pick it (empty: every "
                                                      "option the backend lets people pass)")

    class Meta:
        model = RegisteredModel
        fields = ["id", "name", "description", "backend", "model_id", "revision", "uses", "endpoint", "key_variable",
                  "options", "allowed_options", "trust_remote_code", "enabled"]
        read_only_fields = fields
