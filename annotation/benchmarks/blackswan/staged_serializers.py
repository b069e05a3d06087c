"""What the API answers about a staged claim (`annotation.benchmarks.blackswan.staged`): its current step, the
players of that step, its draft and the worker's earlier answers; and a step's draft or submission."""

from rest_framework import serializers

from annotation.benchmarks.blackswan.staged import STEPS
from annotation.crowd.serializers import FEEDBACK_HELP
from config.api_fields import JSONObjectField


class StepEntrySerializer(serializers.Serializer):
    step = serializers.ChoiceField(choices=list(STEPS))
    label = serializers.CharField()
    number = serializers.IntegerField()
    state = serializers.CharField(help_text="submitted, current or upcoming")


class PartSerializer(serializers.Serializer):
    part = serializers.CharField(help_text="pre, main or post")
    label = serializers.CharField()
    video_id = serializers.IntegerField()
    url = serializers.CharField()
    poster_url = serializers.CharField(help_text="empty when the clip has no poster")
    duration = serializers.FloatField(allow_null=True)


class StageStateSerializer(serializers.Serializer):
    claim = serializers.IntegerField()
    status = serializers.CharField()
    step = serializers.CharField(help_text="the current step, or done")
    step_number = serializers.IntegerField()
    steps = StepEntrySerializer(many=True)
    parts = PartSerializer(many=True, help_text="the players of the current step: only the clips it may show")
    draft = JSONObjectField(help_text="the current step's saved answers, by field")
    draft_revision = serializers.IntegerField()
    earlier = JSONObjectField(help_text="the worker's answers of the earlier steps that this step shows "
                                        "(forecasts, forecast_valid, hypotheses)")


class StepDraftSavedSerializer(serializers.Serializer):
    step = serializers.CharField()
    revision = serializers.IntegerField()
    updated_at = serializers.DateTimeField()


class StepSubmittedSerializer(serializers.Serializer):
    step = serializers.CharField()
    next_step = serializers.CharField(allow_null=True)
    finished = serializers.BooleanField()
    submission = serializers.IntegerField(allow_null=True, help_text="the submission, once the last step is in")
    feedback = JSONObjectField(help_text=FEEDBACK_HELP)
